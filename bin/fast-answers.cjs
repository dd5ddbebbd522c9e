'use strict';
// The launcher's fast path (bin/conndrain.cjs, bin/kubectl-conndrain.cjs): a request that only
// asks for help or the version (`--version`, `--help`, `help inject`, `conntrack list -h`) is
// answered from the table the build wrote beside the compiled CLI
// (dist/cli/<entry>.answers.json, scripts/fast-answers.mjs), with node:fs alone: no ES module,
// no bundle, no commander. The table holds what the compiled CLI printed for each request;
// it is used only while the compiled entry point is the one it was made from (its text, which
// names every chunk by a hash of its content). Anything else, a missing or stale table, or a
// table that cannot be read, returns false and the caller runs the CLI as usual.
const { readFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');

/** The words that can appear in a help or version request; anything without one runs the CLI. */
const REQUEST_WORDS = new Set(['--help', '-h', 'help', '--version', '-V']);
/** The longest request in the table: `conntrack help list`, `conntrack list --help`. */
const LONGEST_REQUEST = 3;

/** The answer to `args` from the table of `entry` (`main`, `kubectl-main`), or undefined. */
function findAnswer(entry, args) {
  if (args.length === 0 || args.length > LONGEST_REQUEST || !args.some((arg) => REQUEST_WORDS.has(arg))) return undefined;
  const dir = join(__dirname, '..', 'dist', 'cli');
  try {
    const table = JSON.parse(readFileSync(join(dir, `${entry}.answers.json`), 'utf8'));
    if (table === null || typeof table.answers !== 'object' || table.answers === null) return undefined;
    const key = args.join('\0');
    if (!Object.hasOwn(table.answers, key) || typeof table.answers[key] !== 'string') return undefined;
    if (readFileSync(join(dir, `${entry}.js`), 'utf8') !== table.bundle) return undefined;
    return table.answers[key];
  } catch {
    return undefined;
  }
}

/**
 * Writes `text` to stdout. A reader that went away (`conndrain --help | head -1`) ends the
 * writing quietly, as in the CLI (cli/closed-pipe.ts); a stdout that would block (a
 * non-blocking pipe that is full) gets the rest through process.stdout, which waits.
 */
function writeOut(text) {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch (error) {
    if (error.code === 'EAGAIN') {
      process.stdout.on('error', () => undefined);
      process.stdout.write(bytes.subarray(written));
    } else if (error.code !== 'EPIPE') {
      process.stderr.write(`conndrain: cannot write to stdout: ${error.message}\n`);
    }
  }
}

/** Answers `args` from the table of `entry` if it can; false when the CLI has to run. */
function answerFromTable(entry, args) {
  const answer = findAnswer(entry, args);
  if (answer === undefined) return false;
  writeOut(answer);
  return true;
}

module.exports = { answerFromTable };
