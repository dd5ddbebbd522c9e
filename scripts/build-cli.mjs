#!/usr/bin/env node
// Compiles the CLI (src, webhook, agent, cli -> dist/) after `npm ci`, so bin/conndrain.mjs
// runs JavaScript, not TypeScript through tsx. Runs after native/scripts/build.mjs (the root
// postinstall), which compiles netlink-native's lib/ -> native/dist that this build type-checks
// against. Skipped, with a line saying why, where there is nothing to compile: a layer of an
// image that copied only the package files (the images run `npm run build` later), or an
// install without the devDependencies (no typescript).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}tsconfig.build.json`) || !existsSync(`${root}cli/main.ts`)) {
  console.log('conndrain: no CLI sources here yet; skipping the CLI build (run `npm run build` later)');
  process.exit(0);
}
let tsc;
try {
  tsc = createRequire(`${root}package.json`).resolve('typescript/bin/tsc');
} catch {
  console.log('conndrain: typescript is not installed (--omit=dev); the CLI runs from dist/ if present');
  process.exit(0);
}
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  console.error('conndrain: tsc -p tsconfig.build.json failed');
  process.exit(1);
}
console.log('conndrain: CLI compiled to dist/');
