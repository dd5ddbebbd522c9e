#!/usr/bin/env node
// Builds the netlink-native addon with node-gyp during `npm ci` (the root package's own
// postinstall, which npm runs; dependencies' scripts are gated by allowScripts).
// Linux only: elsewhere it says so and succeeds, so the webhook (which never loads the
// addon) installs anywhere. The addon itself fails with a clear error when loaded there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const nativeDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');

if (process.platform !== 'linux') {
  console.log(`netlink-native: skipped on ${process.platform} (netlink is Linux-only)`);
  process.exit(0);
}
if (process.env.CONNDRAIN_SKIP_NATIVE === '1' && !force) {
  console.log('netlink-native: skipped (CONNDRAIN_SKIP_NATIVE=1)');
  process.exit(0);
}
if (!existsSync(join(nativeDir, 'binding.gyp'))) {
  console.log('netlink-native: no binding.gyp yet, nothing to build');
  process.exit(0);
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
  console.error('netlink-native: build failed. It needs python3, make, a C compiler and Node headers (Debian: build-essential python3).');
  process.exit(result.status ?? 1);
}
