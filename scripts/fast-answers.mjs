// The table of precomputed answers beside the compiled CLI (scripts/build-cli.mjs step 3):
// dist/cli/<entry>.answers.json for each entry point, read by the launcher
// (bin/fast-answers.cjs), which prints an answer from it without loading the bundle or
// commander. Written from the built bundle itself, so it cannot drift from the program:
//   1. the help and version requests of each command tree (cli/help-requests.ts);
//   2. the compiled entry point run with each request (scripts/run-help-requests.mjs: plain
//      node, stdout a pipe), keeping what exits 0 with nothing on stderr: a request that fails
//      here (`ipvs list --help` where netlink-native cannot load, as in the webhook image's
//      build) stays out of the table and goes through commander;
//   3. the entry point's own text recorded with the answers: esbuild names each chunk after a
//      hash of its content and of the chunks it imports, so the entry point's text pins every
//      chunk its help can load; the launcher uses the table only while that text is unchanged.
// Steps 1 and 2 run in one throw-away program, bundled here and run as a process of its own
// with no NODE_OPTIONS (a test runner's, such as --conditions, would change what loads).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Prints, as JSON, each entry point's requests and the compiled entry point's run of each. */
const PROGRAM = (dir) => `
import { listHelpRequests } from './cli/help-requests.ts';
import { buildProgram } from './cli/program.ts';
import { buildPluginProgram } from './cli/kubectl-plugin.ts';
import { runHelpRequests } from './scripts/run-help-requests.mjs';
const programs = { main: buildProgram(), 'kubectl-main': buildPluginProgram() };
const out = {};
for (const [entry, program] of Object.entries(programs)) {
  const requests = await listHelpRequests(program);
  out[entry] = { requests, runs: await runHelpRequests(${JSON.stringify(dir)} + '/' + entry + '.js', requests) };
}
process.stdout.write(JSON.stringify(out));
`;

/** Runs `node <file>` with no NODE_OPTIONS; resolves with its exit status, stdout and stderr. */
function runNode(file, cwd) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', () => resolve({ status: null, stdout: '', stderr: 'could not start node' }));
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** Each entry point's requests and runs, from the throw-away program (written beside `dir`, removed after). */
async function runRequests({ esbuild, root, dir, external, banner }) {
  const program = `${dir}.answers.mjs`;
  try {
    await esbuild.build({
      absWorkingDir: root,
      stdin: { contents: PROGRAM(dir), resolveDir: root, sourcefile: 'fast-answers-program.ts', loader: 'ts' },
      outfile: program,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external,
      banner: { js: banner },
      logLevel: 'warning',
    });
    const ran = await runNode(program, root);
    if (ran.status !== 0) throw new Error(`running the help requests failed: ${ran.stderr.trim()}`);
    return JSON.parse(ran.stdout);
  } finally {
    rmSync(program, { force: true });
  }
}

/** Writes `<entry>.answers.json` into `dir` (the built bundle) for each entry point; returns `kept of listed` for each. */
export async function writeFastAnswers({ esbuild, root, dir, external, banner }) {
  const counts = {};
  for (const [entry, { requests, runs }] of Object.entries(await runRequests({ esbuild, root, dir, external, banner }))) {
    const answers = {};
    requests.forEach((argv, i) => {
      const r = runs[i];
      if (r.status === 0 && r.stderr === '' && r.stdout !== '') answers[argv.join('\0')] = r.stdout;
    });
    writeFileSync(join(dir, `${entry}.answers.json`), `${JSON.stringify({ bundle: readFileSync(join(dir, `${entry}.js`), 'utf8'), answers })}\n`);
    counts[entry] = `${String(Object.keys(answers).length)} of ${String(requests.length)}`;
  }
  return counts;
}
