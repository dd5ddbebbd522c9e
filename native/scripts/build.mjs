#!/usr/bin/env node
// Builds the netlink-native package during `npm ci` (the root package's own postinstall, which
// npm runs; dependencies' scripts are gated by allowScripts, and this workspace declares no
// install script of its own: "gypfile": false keeps npm from adding `node-gyp rebuild`):
//   1. the C addon (native/src/{wire,ops,napi}/*.c, listed in binding.gyp) with node-gyp ->
//      native/build/Release/netlink_native.node (Linux only: elsewhere it says so and goes on,
//      so the webhook, which never loads it, installs anywhere; the addon then fails with a
//      clear error when opened);
//   2. the TypeScript sources native/lib -> native/dist (JavaScript + .d.ts), the package's
//      published entry (`exports` in native/package.json).
// Flags: --force rebuilds the addon even with CONNDRAIN_SKIP_NATIVE=1; --ts-only / --addon-only.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const nativeDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');
const tsOnly = process.argv.includes('--ts-only');
const addonOnly = process.argv.includes('--addon-only');

function buildAddon() {
  if (process.platform !== 'linux') {
    console.log(`netlink-native: addon skipped on ${process.platform} (netlink is Linux-only)`);
    return;
  }
  if (process.env.CONNDRAIN_SKIP_NATIVE === '1' && !force) {
    console.log('netlink-native: addon skipped (CONNDRAIN_SKIP_NATIVE=1)');
    return;
  }
  if (!existsSync(join(nativeDir, 'binding.gyp'))) {
    console.log('netlink-native: no binding.gyp, no addon to build');
    return;
  }
  // node-gyp: the one npm runs scripts with, else the copy bundled with npm next to this node
  // (run directly: `node native/scripts/build.mjs`), else one on PATH.
  const prefix = join(dirname(process.execPath), '..');
  const bundledGyp = join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  const gyp = process.env.npm_config_node_gyp ?? (existsSync(bundledGyp) ? bundledGyp : undefined);
  const [cmd, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
  // Headers of the running node when its install has them (Debian's nodejs, official tarballs):
  // builds offline instead of downloading them.
  const nodedir = existsSync(join(prefix, 'include/node/common.gypi')) ? [`--nodedir=${prefix}`] : [];
  const result = spawnSync(cmd, [...args, 'rebuild', ...nodedir], { cwd: nativeDir, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('netlink-native: addon build failed. It needs python3, make, a C compiler and Node headers (Debian: build-essential python3).');
    process.exit(result.status ?? 1);
  }
}

function buildTypeScript() {
  let tsc;
  try {
    tsc = createRequire(join(nativeDir, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    if (existsSync(join(nativeDir, 'dist', 'index.js'))) {
      console.log('netlink-native: no typescript installed; keeping the existing dist/');
      return;
    }
    console.error('netlink-native: cannot compile lib/ -> dist/: the typescript package is not installed (a devDependency of the root)');
    process.exit(1);
  }
  const result = spawnSync(process.execPath, [tsc, '-p', join(nativeDir, 'tsconfig.json')], { cwd: nativeDir, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('netlink-native: tsc -p native/tsconfig.json failed');
    process.exit(result.status ?? 1);
  }
  console.log('netlink-native: lib/ compiled to dist/');
}

if (!tsOnly) buildAddon();
if (!addonOnly) buildTypeScript();
