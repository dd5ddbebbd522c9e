/**
 * What a run of the CLI loads (from the TypeScript sources, as the tests run it): `--version`
 * only the entry point, `--help` the program and commander but no command module, no option
 * spec and no component; a command loads its own module and not the others'. Each run lists
 * the modules it loaded through a module hook (test/cli/module-trace.mjs), not by timing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const REPO = new URL('..', import.meta.url).pathname;
const TRACE_HOOK = join(REPO, 'test/cli/module-trace.mjs');
const dir = mkdtempSync(join(tmpdir(), 'cdstart-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface TracedRun {
  status: number | null;
  stdout: string;
  /** The repository's own modules the run loaded, relative: `cli/main.ts`. */
  own: string[];
  /** The packages it loaded from node_modules, by name. */
  packages: string[];
}

let runs = 0;

function tracedRun(entry: string, args: string[]): TracedRun {
  const trace = join(dir, `trace-${String(++runs)}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', TRACE_HOOK, entry, ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, CONNDRAIN_MODULE_TRACE: trace },
    timeout: 60_000,
  });
  assert.equal(r.error, undefined);
  const files = readFileSync(trace, 'utf8').split('\n').filter((url) => url.startsWith('file://')).map((url) => new URL(url).pathname);
  const own = files.filter((path) => path.startsWith(REPO) && !path.includes('/node_modules/')).map((path) => path.slice(REPO.length));
  const packages = files.map((path) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1]).filter((name): name is string => name !== undefined);
  return { status: r.status, stdout: r.stdout, own: [...new Set(own)].sort(), packages: [...new Set(packages)].sort() };
}

const commandModules = (run: TracedRun): string[] => run.own.filter((path) => path.startsWith('cli/commands/'));

describe('CLI start-up: what loads', () => {
  it('`conndrain --version` loads the entry point and the version, nothing else', () => {
    const run = tracedRun('cli/main.ts', ['--version']);
    assert.equal(run.status, 0);
    assert.equal(run.stdout, '0.1.0\n');
    assert.deepEqual(run.own, ['cli/closed-pipe.ts', 'cli/entry.ts', 'cli/main.ts', 'cli/version.ts']);
    assert.deepEqual(run.packages.filter((name) => name !== 'tsx'), []);
  });

  for (const [entry, name] of [['cli/main.ts', 'conndrain'], ['cli/kubectl-main.ts', 'kubectl conndrain']] as const) {
    it(`\`${name} --help\` lists every command without loading one, nor an option spec or a component`, () => {
      const run = tracedRun(entry, ['--help']);
      assert.equal(run.status, 0);
      assert.match(run.stdout, /^Commands:\n {2}inject \[options\]/m);
      assert.deepEqual(commandModules(run), []);
      assert.deepEqual(run.own.filter((path) => !path.startsWith('cli/')), [], 'nothing outside cli/ (src/config, webhook/, agent/, kube/, native/)');
      assert.deepEqual(run.packages.filter((p) => p !== 'tsx'), ['commander']);
    });
  }

  it('`conndrain help inject` loads the inject command and not its implementation or the other commands', () => {
    const run = tracedRun('cli/main.ts', ['help', 'inject']);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /--default-hook/);
    assert.deepEqual(commandModules(run), ['cli/commands/inject.ts']);
    assert.deepEqual(run.own.filter((path) => path.startsWith('webhook/')), []);
  });

  it('`conndrain conntrack stale --help` loads conntrack and stale, and of netlink-native only its types module (the protocol table), not the addon', () => {
    const run = tracedRun('cli/main.ts', ['conntrack', 'stale', '--help']);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /--kubeconfig <file>/);
    assert.deepEqual(commandModules(run), ['cli/commands/conntrack.ts', 'cli/commands/stale.ts']);
    assert.deepEqual(run.own.filter((path) => path.startsWith('native/')), ['native/lib/types.ts'], run.own.join(' '));
  });
});
