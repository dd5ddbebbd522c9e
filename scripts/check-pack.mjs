#!/usr/bin/env node
// `npm pack`'s last step before it writes the tarball (package.json "prepack", after the CLI
// build): refuses to pack a package that would install but not run. The tarball carries the
// compiled CLI (dist/cli) and netlink-native with its compiled addon as a bundled dependency
// (package.json "bundleDependencies"), so that `npm install -g conndrain-<version>.tgz` never
// resolves netlink-native by name from a registry (a public package of that name would be
// installed instead) and never compiles anything on the user's machine.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUIRED = [
  ['dist/cli/main.js', 'the compiled CLI: node scripts/build-cli.mjs --required'],
  ['dist/cli/kubectl-main.js', 'the compiled plugin: node scripts/build-cli.mjs --required'],
  ['native/dist/index.js', 'netlink-native compiled: npm run build'],
  ['native/build/Release/netlink_native.node', 'the netlink addon: npm run build:native (build-essential, python3)'],
];

const missing = REQUIRED.filter(([path]) => !existsSync(join(root, path)));
for (const [path, how] of missing) console.error(`conndrain: cannot pack: ${path} is missing (${how})`);
if (missing.length > 0) process.exit(1);
