/**
 * The compiled CLI as `npm ci` and the images build it (scripts/build-cli.mjs: one esbuild
 * bundle with code splitting): it runs commands with plain node, `--version` reads no chunk
 * with commander in it and `--help` no chunk with a command's code (esbuild marks each
 * module's code with a `// <path>` line), and the packages other than commander stay in
 * node_modules. Built without the type-check (the typecheck script does that) into a
 * directory of its own under dist/, so that node finds node_modules from it as from dist/cli.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const REPO = new URL('..', import.meta.url).pathname;
const OUT = join(REPO, 'dist', `test-cli-${String(process.pid)}`);
const TRACE_HOOK = join(REPO, 'test/cli/module-trace.mjs');
const traces = mkdtempSync(join(tmpdir(), 'cdbundle-'));
let runs = 0;

/** Runs the bundle's `entry` with plain node (no tsx): exit status, stdout and the bundle's files it loaded. */
function runCompiled(entry: string, args: string[]): { status: number | null; stdout: string; stderr: string; loaded: string[] } {
  const trace = join(traces, `trace-${String(++runs)}`);
  const r = spawnSync(process.execPath, ['--import', TRACE_HOOK, join(OUT, entry), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    // No conndrain-source condition: the compiled CLI loads netlink-native's dist/, as installed.
    env: { ...process.env, NODE_OPTIONS: '', CONNDRAIN_MODULE_TRACE: trace },
    timeout: 60_000,
  });
  const loaded = readFileSync(trace, 'utf8').split('\n').filter((url) => url.startsWith('file://')).map((url) => new URL(url).pathname).filter((path) => path.startsWith(`${OUT}/`));
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, loaded };
}

/** The `// <path>` markers esbuild puts before each module's code in the loaded files. */
function modulesIn(files: string[]): string[] {
  return files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^\/\/ (\S+\.(?:ts|js|mjs))$/gm)].map((m) => m[1] ?? ''));
}

describe('the compiled CLI (esbuild bundle)', () => {
  before(() => {
    const built = spawnSync(process.execPath, ['scripts/build-cli.mjs', '--required', '--no-typecheck', '--outdir', OUT], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    assert.equal(built.status, 0, built.stderr);
  });
  after(() => {
    rmSync(OUT, { recursive: true, force: true });
    rmSync(traces, { recursive: true, force: true });
  });

  it('has the two entry points and their chunks, no packages but commander inside', () => {
    assert.deepEqual(readdirSync(OUT).filter((name) => name.endsWith('.js')).sort(), ['kubectl-main.js', 'main.js']);
    const chunks = readdirSync(join(OUT, 'chunks')).filter((name) => name.endsWith('.js')).map((name) => join(OUT, 'chunks', name));
    const packages = new Set(modulesIn(chunks).map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1]).filter((name) => name !== undefined));
    assert.deepEqual([...packages], ['commander']);
  });

  it('`--version` loads no chunk with commander or a command in it', () => {
    const run = runCompiled('main.js', ['--version']);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '0.1.0\n');
    assert.deepEqual(modulesIn(run.loaded).filter((path) => path.includes('node_modules/') || path.startsWith('cli/commands/')), []);
  });

  for (const entry of ['main.js', 'kubectl-main.js']) {
    it(`${entry} --help loads commander and no command, option spec or component`, () => {
      const run = runCompiled(entry, ['--help']);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^ {2}doctor \[options\]/m);
      const modules = modulesIn(run.loaded);
      assert.ok(modules.some((path) => path.includes('node_modules/commander/')));
      assert.deepEqual(modules.filter((path) => !path.startsWith('cli/') && !path.includes('node_modules/commander/')), []);
      assert.deepEqual(modules.filter((path) => path.startsWith('cli/commands/')), []);
    });
  }

  it('runs a command end to end: `inject -f examples/deployment.yaml`', () => {
    const run = runCompiled('main.js', ['inject', '-f', 'examples/deployment.yaml']);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /preStop/);
    assert.ok(modulesIn(run.loaded).includes('cli/commands/inject.ts'));
  });

  it('keeps the usage-error rule for a command it loads: one line, exit 2', () => {
    const run = runCompiled('main.js', ['agent', '--no-such-flag']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^conndrain agent: unknown option '--no-such-flag'; options: --node-name/);
    assert.equal(run.stderr.split('\n').filter((line) => line !== '').length, 1);
  });
});
