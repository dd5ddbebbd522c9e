/**
 * `kubectl conndrain` through kubectl's own plugin discovery: an executable named
 * kubectl-conndrain on PATH (how `npm install -g` links package.json's bin, and how krew
 * installs plugins). Offline: `kubectl plugin list` and plugin dispatch need no cluster.
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PLUGIN_COMMANDS } from './kubectl-plugin.js';

const REPO = new URL('..', import.meta.url).pathname;
const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).error === undefined ? false : 'kubectl not on PATH';

describe('kubectl conndrain (plugin discovery)', { skip: kubectlMissing }, () => {
  const binDir = mkdtempSync(join(tmpdir(), 'cdplug-'));
  const bin = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin;
  symlinkSync(join(REPO, bin['kubectl-conndrain'] ?? 'missing'), join(binDir, 'kubectl-conndrain'));
  // A kubeconfig that does not exist: nothing here may need a cluster.
  // Without the test runner's NODE_OPTIONS (--conditions=conndrain-source): the compiled plugin
  // would load netlink-native's TypeScript sources, which only tsx runs.
  const { NODE_OPTIONS: _testConditions, ...inherited } = process.env;
  const env = { ...inherited, PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}`, KUBECONFIG: join(binDir, 'none') };
  const kubectl = (args: string[], input?: string): SpawnSyncReturns<string> =>
    spawnSync('kubectl', args, { env, encoding: 'utf8', ...(input === undefined ? {} : { input }), timeout: 60_000 });
  after(() => rmSync(binDir, { recursive: true, force: true }));

  it('package.json installs the executable kubectl-conndrain', () => {
    assert.equal(bin['kubectl-conndrain'], 'bin/kubectl-conndrain.cjs');
  });

  it('`kubectl plugin list` finds it', () => {
    const listed = kubectl(['plugin', 'list']);
    assert.match(listed.stdout, new RegExp(`${binDir}/kubectl-conndrain`), listed.stderr);
  });

  it('`kubectl conndrain --help` lists the operator commands and not the daemons', () => {
    const help = kubectl(['conndrain', '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: kubectl conndrain/);
    for (const command of PLUGIN_COMMANDS) assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'), command);
    for (const daemon of ['webhook', 'agent', 'lab']) assert.doesNotMatch(help.stdout, new RegExp(`^  ${daemon} `, 'm'), daemon);
  });

  it('`kubectl conndrain inject` rewrites a manifest on stdin', () => {
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    conndrain.io/drain: "20s"\nspec:\n  containers:\n    - name: app\n      image: nginx\n';
    const out = kubectl(['conndrain', 'inject', '--default-hook', 'sleep'], pod);
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /preStop/);
    assert.match(out.stdout, /terminationGracePeriodSeconds: 30/);
  });

  it('`kubectl conndrain stale --help` offers --kubeconfig', () => {
    const help = kubectl(['conndrain', 'stale', '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /--kubeconfig <file>/);
  });

  it('`kubectl conndrain version` prints the version', () => {
    const version = kubectl(['conndrain', 'version']);
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  it('kubectl\'s flags after the plugin\'s name reach the command, or are refused with a reason', () => {
    // kubectl itself refuses flags before the plugin's name; after it they are the plugin's.
    const stale = kubectl(['conndrain', '--context', 'nope', '--kubeconfig', join(binDir, 'none'), 'stale']);
    assert.equal(stale.status, 2, stale.stderr);
    assert.match(stale.stderr, /^kubectl conndrain stale: ENOENT: .*none/);
    const inject = kubectl(['conndrain', '-n', 'shop', 'inject']);
    assert.equal(inject.status, 2);
    assert.equal(inject.stderr, 'kubectl conndrain inject: -n does not apply: inject does not talk to the API server\n');
  });
});
