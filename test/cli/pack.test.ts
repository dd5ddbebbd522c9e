/**
 * The package a user installs: `npm pack` in the checkout, then `npm install -g` of the
 * tarball into an empty prefix with a registry that refuses every connection, so that any
 * package the tarball does not carry (netlink-native above all: a public package of that
 * name would be installed in its place) fails the install instead of being fetched. Then the
 * installed commands run from the prefix alone: `conndrain --version`, the plugin's help, and
 * an `inject` of the example manifest. The same tarball is the krew archive: installed the way
 * krew installs it (the manifest's files and bin), the plugin runs. About a minute: the pack
 * builds the CLI first (prepack).
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { KREW_BIN, renderKrewManifest } from '../../scripts/release/krew.js';
import { sha256 } from '../../scripts/release/render.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** Nothing listens on port 9 (discard): every registry request fails at once. */
const NO_REGISTRY = 'http://127.0.0.1:9';

/** The test runner's NODE_OPTIONS make `netlink-native` resolve to TypeScript sources, which an installed package has not. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  return env;
}

function run(command: string, args: string[], options: { cwd?: string; input?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: cleanEnv(), encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024, ...(options.input === undefined ? {} : { input: options.input }) });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} exited ${String(result.status)}: ${result.error?.message ?? ''}${result.stderr.slice(-2000)}`);
  return result.stdout;
}

/**
 * A worktree that links another checkout's node_modules cannot be packed: npm bundles the
 * dependencies from where the link points, outside the package (`../main/node_modules/...`).
 */
const sharedNodeModules = lstatSync(join(ROOT, 'node_modules')).isSymbolicLink() ? 'node_modules is a symbolic link to another checkout\'s; npm pack needs its own' : false;

describe('npm pack + npm install -g (offline)', { skip: sharedNodeModules }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdpack-'));
  const prefix = join(dir, 'prefix');
  const tarball = join(dir, `conndrain-${version}.tgz`);
  let files: string[] = [];

  before(() => {
    ok(run('npm', ['pack', '--pack-destination', dir, '--cache', join(dir, 'cache')]), 'npm pack');
    files = ok(run('tar', ['-tzf', tarball]), 'tar -t').split('\n').filter((line) => line !== '');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('carries the compiled CLI, the launchers and netlink-native with its addon', () => {
    for (const path of ['package/bin/conndrain.cjs', 'package/bin/kubectl-conndrain.cjs', 'package/bin/conndrain.mjs', 'package/dist/cli/main.js', 'package/dist/cli/kubectl-main.js', 'package/node_modules/netlink-native/package.json', 'package/node_modules/netlink-native/dist/index.js', 'package/node_modules/netlink-native/build/Release/netlink_native.node']) {
      assert.ok(files.includes(path), `${path} is not in the tarball`);
    }
  });

  it('carries no tests, lab, bench, sources or build tree', () => {
    const own = files.filter((path) => !path.startsWith('package/node_modules/'));
    const stray = own.filter((path) => /\.test\.ts$|^package\/(test|lab|bench|agent|kube|webhook|src|cli|manifests|native|images|scripts|docs)\//.test(path));
    assert.deepEqual(stray, []);
    const nativeStray = files.filter((path) => /^package\/node_modules\/netlink-native\/(src|lib|test|scripts|binding\.gyp|build\/Release\/obj)/.test(path));
    assert.deepEqual(nativeStray, []);
  });

  it('installs into an empty prefix without a registry and runs', () => {
    ok(run('npm', ['install', '-g', '--prefix', prefix, '--registry', NO_REGISTRY, '--cache', join(dir, 'cache'), '--no-audit', '--no-fund', '--fetch-retries', '0', tarball]), 'npm install -g');
    const bin = join(prefix, 'bin');
    assert.equal(ok(run(join(bin, 'conndrain'), ['--version']), 'conndrain --version').trim(), version);
    const help = ok(run(join(bin, 'kubectl-conndrain'), ['--help']), 'kubectl-conndrain --help');
    assert.match(help, /^Usage: kubectl conndrain/m);
    assert.match(help, /^ {2}inject /m);
    const injected = ok(run(join(bin, 'kubectl-conndrain'), ['inject', '-f', join(ROOT, 'examples', 'deployment.yaml')]), 'kubectl-conndrain inject');
    assert.match(injected, /preStop:/);
    // The addon loads from the bundled netlink-native: a listening socket needs no privileges.
    const probe = "import { closeSync } from 'node:fs'; import { listenReusePort } from 'netlink-native'; closeSync(listenReusePort('127.0.0.1', 0)); console.log('addon loaded');";
    const installed = join(prefix, 'lib', 'node_modules', 'conndrain');
    assert.match(ok(run(process.execPath, ['--input-type=module', '-e', probe], { cwd: installed }), 'the bundled addon'), /addon loaded/);
  });

  it('is the krew archive: unpacked by the manifest\'s rules, `kubectl-conndrain` runs', () => {
    interface Platform { selector: { matchLabels: Record<string, string> }; uri: string; sha256: string; files: Array<{ from: string; to: string }>; bin: string }
    const digest = sha256(readFileSync(tarball));
    const manifest = parse(renderKrewManifest(version, [{ arch: process.arch, uri: `https://example.invalid/conndrain-${version}.tgz`, sha256: digest }])) as { kind: string; metadata: { name: string }; spec: { version: string; platforms: Platform[] } };
    assert.equal(manifest.kind, 'Plugin');
    assert.equal(manifest.metadata.name, 'conndrain');
    assert.equal(manifest.spec.version, `v${version}`);
    const [platform] = manifest.spec.platforms;
    assert.ok(platform !== undefined);
    assert.equal(platform.sha256, digest);
    assert.equal(platform.bin, KREW_BIN);
    assert.equal(platform.selector.matchLabels['os'], 'linux');
    // krew: unpack into a work directory, move `from` (a glob) to `to` in the install directory, link `bin`.
    const work = join(dir, 'krew-work');
    const install = join(dir, 'krew-install');
    mkdirSync(work);
    mkdirSync(install);
    ok(run('tar', ['-xzf', tarball, '-C', work]), 'tar -x');
    for (const rule of platform.files) {
      const from = rule.from.replace(/\/\*$/, '');
      for (const name of readdirSync(join(work, from))) cpSync(join(work, from, name), join(install, rule.to, name), { recursive: true, verbatimSymlinks: true });
    }
    const link = join(dir, 'kubectl-conndrain');
    symlinkSync(join(install, platform.bin), link);
    assert.match(ok(run(link, ['--help']), 'krew-installed kubectl-conndrain --help'), /^Usage: kubectl conndrain/m);
    assert.match(ok(run(link, ['inject', '-f', join(ROOT, 'examples', 'deployment.yaml')]), 'krew-installed inject'), /preStop:/);
  });
});
