/**
 * The launcher's fast path (bin/conndrain.cjs, bin/kubectl-conndrain.cjs, bin/fast-answers.cjs)
 * against the compiled CLI it stands in for. Built as `npm ci` builds it (scripts/build-cli.mjs,
 * no type-check) into a tree of its own under dist/ (bin/ and dist/cli/ side by side, so the
 * launchers find their bundle as in a checkout, and node finds node_modules from it):
 * - for EVERY request in the tables, the launcher prints what commander prints when the
 *   compiled entry point runs with the same arguments, with the same exit status (0);
 * - the tables answer every help and version request of both programs (cli/help-requests.ts);
 * - the fast path loads no ES module, no bundle file and not commander: node's own list of
 *   the internal modules it loaded (process.moduleLoadList) is that of an empty CommonJS
 *   script, and require.cache holds the launcher's two files;
 * - a stale table (the entry point rebuilt) or none is not used: the CLI answers;
 * - a reader that went away ends the answer quietly, exit 0 (as cli/closed-pipe.ts does);
 * - other requests go through the CLI: usage errors still one line and exit 2.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listHelpRequests } from './help-requests.js';
import { buildPluginProgram } from './kubectl-plugin.js';
import { buildProgram } from './program.js';

const REPO = new URL('..', import.meta.url).pathname;
const TREE = join(REPO, 'dist', `test-fast-${String(process.pid)}`);
const LAUNCHERS = ['conndrain.cjs', 'kubectl-conndrain.cjs', 'fast-answers.cjs', 'conndrain.mjs'];
/** The entry points, their launchers and the program each builds. */
const ENTRIES = [
  { entry: 'main', launcher: 'conndrain.cjs', build: buildProgram },
  { entry: 'kubectl-main', launcher: 'kubectl-conndrain.cjs', build: buildPluginProgram },
] as const;

interface Run { status: number | null; stdout: string; stderr: string }

/** `node <args>` without the test runner's NODE_OPTIONS (the compiled CLI loads netlink-native's dist/, as installed). */
function node(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs `jobs` two at a time (the machine's other work shares its cores). */
async function twoAtATime<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < jobs.length; i += 2) results.push(...(await Promise.all(jobs.slice(i, i + 2).map((job) => job()))));
  return results;
}

interface Table { bundle: string; answers: Record<string, string> }

const tableOf = (tree: string, entry: string): Table => JSON.parse(readFileSync(join(tree, 'dist/cli', `${entry}.answers.json`), 'utf8')) as Table;

/** A copy of the built tree to spoil (stale and missing tables). */
function copyTree(name: string): string {
  const copy = `${TREE}-${name}`;
  cpSync(TREE, copy, { recursive: true });
  return copy;
}

describe('the launcher\'s fast path (help and version from the build\'s table)', () => {
  before(() => {
    const built = spawnSync(process.execPath, ['scripts/build-cli.mjs', '--required', '--no-typecheck', '--outdir', join(TREE, 'dist/cli')], { cwd: REPO, encoding: 'utf8', timeout: 300_000, env: { ...process.env, NODE_OPTIONS: '' } });
    assert.equal(built.status, 0, built.stderr);
    mkdirSync(join(TREE, 'bin'));
    for (const file of LAUNCHERS) copyFileSync(join(REPO, 'bin', file), join(TREE, 'bin', file));
  });
  after(() => {
    for (const suffix of ['', '-stale', '-missing']) rmSync(`${TREE}${suffix}`, { recursive: true, force: true });
  });

  for (const { entry, launcher, build } of ENTRIES) {
    it(`${entry}: the table answers every help and version request of the program`, async () => {
      const requests = await listHelpRequests(build());
      assert.deepEqual(Object.keys(tableOf(TREE, entry).answers).sort(), requests.map((argv) => argv.join('\0')).sort());
    });

    it(`${entry}: for every request in the table, ${launcher} prints what the compiled CLI (commander) prints, exit 0`, async () => {
      const argvs = Object.keys(tableOf(TREE, entry).answers).map((key) => key.split('\0'));
      const pairs = await twoAtATime(argvs.map((argv) => async () => [
        argv,
        await node([join(TREE, 'bin', launcher), ...argv]),
        await node([join(TREE, 'dist/cli', `${entry}.js`), ...argv]),
      ] as const));
      for (const [argv, fast, commander] of pairs) {
        const label = argv.join(' ');
        assert.equal(commander.status, 0, `${label}: ${commander.stderr}`);
        assert.equal(fast.status, commander.status, label);
        assert.equal(fast.stderr, '', label);
        assert.equal(fast.stdout, commander.stdout, label);
      }
    });
  }

  it('prints what commander prints with colors forced on or off (commander styles nothing by default)', async () => {
    for (const argv of [['--help'], ['conntrack', 'list', '--help'], ['help', 'doctor']]) {
      const fast = await node([join(TREE, 'bin/conndrain.cjs'), ...argv]);
      const envs: Record<string, string>[] = [{ FORCE_COLOR: '1' }, { NO_COLOR: '1' }];
      for (const env of envs) {
        const commander = await node([join(TREE, 'dist/cli/main.js'), ...argv], env);
        assert.equal(fast.stdout, commander.stdout, `${argv.join(' ')} ${JSON.stringify(env)}`);
      }
    }
  });

  it('loads no ES module, no bundle file and not commander (node\'s module list, not timing)', async () => {
    const probe = join(TREE, 'probe.cjs');
    const empty = join(TREE, 'empty.cjs');
    writeFileSync(probe, "process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify({ internal: process.moduleLoadList, required: Object.keys(require.cache) })));\n");
    writeFileSync(empty, '');
    const probed = async (args: string[]): Promise<{ internal: string[]; required: string[] }> => {
      const out = join(TREE, 'probe.json');
      const r = await node(['--require', probe, ...args], { PROBE_OUT: out });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(readFileSync(out, 'utf8')) as { internal: string[]; required: string[] };
    };
    const baseline = new Set((await probed([empty])).internal);
    for (const [launcher, argv] of [['conndrain.cjs', ['--version']], ['conndrain.cjs', ['--help']], ['conndrain.cjs', ['conntrack', 'help', 'stale']], ['kubectl-conndrain.cjs', ['stale', '-h']]] as const) {
      const run = await probed([join(TREE, 'bin', launcher), ...argv]);
      assert.deepEqual(run.internal.filter((name) => !baseline.has(name)), [], `${launcher} ${argv.join(' ')}: node modules beyond an empty script`);
      assert.deepEqual(run.required.filter((file) => file !== probe).sort(), [join(TREE, 'bin', launcher), join(TREE, 'bin/fast-answers.cjs')].sort());
    }
    // The same probe sees the ES module loader when the CLI runs (the check can fail).
    const slow = await probed([join(TREE, 'bin/conndrain.cjs'), 'inject', '-f', 'examples/deployment.yaml']);
    assert.ok(slow.internal.includes('NativeModule internal/modules/esm/loader'), 'a command loads the ES module loader');
  });

  it('uses the table while the entry point is the one it was made from, and not once it is rebuilt', async () => {
    const tree = copyTree('stale');
    const tablePath = join(tree, 'dist/cli/main.answers.json');
    const table = tableOf(tree, 'main');
    const real = table.answers['--help'];
    writeFileSync(tablePath, JSON.stringify({ ...table, answers: { ...table.answers, '--help': 'from the table\n' } }));
    assert.equal((await node([join(tree, 'bin/conndrain.cjs'), '--help'])).stdout, 'from the table\n');
    appendFileSync(join(tree, 'dist/cli/main.js'), '// rebuilt\n');
    const stale = await node([join(tree, 'bin/conndrain.cjs'), '--help']);
    assert.equal(stale.status, 0, stale.stderr);
    assert.equal(stale.stdout, real);
  });

  it('without a table (or an unreadable one) the CLI answers', async () => {
    const tree = copyTree('missing');
    rmSync(join(tree, 'dist/cli/main.answers.json'));
    writeFileSync(join(tree, 'dist/cli/kubectl-main.answers.json'), '{"bundle": ');
    const version = await node([join(tree, 'bin/conndrain.cjs'), '--version']);
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, '0.1.0\n');
    const help = await node([join(tree, 'bin/kubectl-conndrain.cjs'), '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.equal(help.stdout, tableOf(TREE, 'kubectl-main').answers['--help']);
  });

  it('into a reader that is already gone (`conndrain --help | true`): exit 0, nothing on stderr', async () => {
    for (const argv of [['--help'], ['--version']]) {
      const run = await new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [join(TREE, 'bin/conndrain.cjs'), ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
        child.stdout.destroy();
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stderr }));
      });
      assert.equal(run.stderr, '', argv.join(' '));
      assert.equal(run.status, 0, argv.join(' '));
    }
  });

  it('everything else goes through the CLI: a usage error is one line, exit 2', async () => {
    for (const argv of [['--no-such-flag'], ['--help', '--no-such-flag'], ['agent', '--no-such-flag'], ['help', 'no-such-command']]) {
      const run = await node([join(TREE, 'bin/conndrain.cjs'), ...argv]);
      const commander = await node([join(TREE, 'dist/cli/main.js'), ...argv]);
      assert.equal(run.status, commander.status, argv.join(' '));
      assert.equal(run.stdout, commander.stdout, argv.join(' '));
      assert.equal(run.stderr, commander.stderr, argv.join(' '));
    }
    const usage = await node([join(TREE, 'bin/conndrain.cjs'), 'agent', '--no-such-flag']);
    assert.equal(usage.status, 2);
    assert.equal(usage.stderr.split('\n').filter((line) => line !== '').length, 1);
    assert.equal(usage.stdout, '');
  });
});
