/**
 * What a command line from the docs runs, as far as this repository defines it: `conndrain`
 * (also as `node bin/conndrain.cjs`, `node /app/bin/conndrain.mjs` in an image, or
 * `npm run conndrain --`), `kubectl conndrain` (or `kubectl-conndrain`), or an npm script
 * (`npm run NAME`, `npm test`). Wrappers in front (`sudo`, `nice`, `VAR=value`) are looked
 * through, and so is a command run by another one after `--` (`kubectl debug ... -- node
 * /app/bin/conndrain.mjs agent --cleanup`). A line that prints a command's name followed by a
 * colon (`conndrain agent: invalid configuration: ...`) is the CLI's output, not a command.
 */

export type Invocation =
  | { readonly kind: 'conndrain' | 'kubectl conndrain'; readonly args: readonly string[] }
  | { readonly kind: 'npm script'; readonly script: string; readonly args: readonly string[] };

const WRAPPERS = new Set(['sudo', 'time', 'env', 'exec']);
const CLI_SCRIPT = /(^|\/)(bin\/conndrain\.[cm]?js|cli\/main\.ts)$/;
const NODE_FLAGS_WITH_VALUE = new Set(['--import', '-r', '--require', '--loader']);

/** The words after the wrappers in front of a command. */
function unwrap(words: readonly string[]): readonly string[] {
  let i = 0;
  for (;;) {
    const word = words[i] ?? '';
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word) || WRAPPERS.has(word)) i++;
    else if (word === 'nice') i += words[i + 1] === '-n' ? 3 : /^-n?\d+$/.test(words[i + 1] ?? '') ? 2 : 1;
    else return words.slice(i);
  }
}

/** `node [flags] bin/conndrain.cjs ARGS`: ARGS, when the script is the CLI. */
function nodeScriptArgs(words: readonly string[]): readonly string[] | undefined {
  for (let i = 1; i < words.length; i++) {
    const word = words[i] ?? '';
    if (NODE_FLAGS_WITH_VALUE.has(word)) i++;
    else if (!word.startsWith('-')) return CLI_SCRIPT.test(word) ? words.slice(i + 1) : undefined;
  }
  return undefined;
}

/** A line of output that starts with a command's name: `conndrain conntrack list: ...`. */
function isOutput(args: readonly string[]): boolean {
  for (const word of args) {
    if (word.startsWith('-')) return false;
    if (word.endsWith(':')) return true;
  }
  return false;
}

function cli(kind: 'conndrain' | 'kubectl conndrain', args: readonly string[]): Invocation | undefined {
  return isOutput(args) ? undefined : { kind, args };
}

function npmInvocation(words: readonly string[]): Invocation | undefined {
  const [, sub] = words;
  if (sub === 'test' || sub === 't') return { kind: 'npm script', script: 'test', args: words.slice(2) };
  if (sub !== 'run' && sub !== 'run-script') return undefined;
  const at = words.findIndex((word, i) => i >= 2 && !word.startsWith('-'));
  if (at < 0) return undefined;
  const args = words.slice(at + 1);
  return { kind: 'npm script', script: words[at] ?? '', args: args[0] === '--' ? args.slice(1) : args };
}

function directInvocation(words: readonly string[]): Invocation | undefined {
  const [first = '', second] = words;
  if (first === 'conndrain') return cli('conndrain', words.slice(1));
  if (first === 'kubectl-conndrain') return cli('kubectl conndrain', words.slice(1));
  if (first === 'kubectl' && second === 'conndrain') return cli('kubectl conndrain', words.slice(2));
  if (first === 'npm') return npmInvocation(words);
  if (first === 'node') {
    const args = nodeScriptArgs(words);
    return args === undefined ? undefined : cli('conndrain', args);
  }
  return undefined;
}

/** What `words` (one simple command of a page) runs, if it is one of this repository's commands. */
export function findInvocation(words: readonly string[]): Invocation | undefined {
  const unwrapped = unwrap(words);
  const direct = directInvocation(unwrapped);
  if (direct !== undefined) return direct;
  const dashes = unwrapped.indexOf('--');
  return dashes < 0 ? undefined : findInvocation(unwrapped.slice(dashes + 1));
}

/**
 * The CLI command an npm script runs with `args` (`"demo": "tsx ... cli/main.ts demo"`, `npm
 * run demo -- --json`): the script's words after the CLI's entry point, then `args`.
 */
export function scriptCliArgs(script: string, args: readonly string[]): readonly string[] | undefined {
  const words = script.split(/\s+/);
  const entry = words.findIndex((word) => CLI_SCRIPT.test(word));
  return entry < 0 ? undefined : [...words.slice(entry + 1), ...args];
}
