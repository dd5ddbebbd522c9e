#!/usr/bin/env node
// Builds the compiled CLI after `npm ci` (the root postinstall) and in the images
// (`npm run build`), so bin/conndrain.mjs runs JavaScript, not TypeScript through tsx:
//   1. type-checks what ships (tsconfig.build.json: src, log, time, kube, webhook, agent, cli) with tsc;
//   2. bundles cli/main.ts and cli/kubectl-main.ts with esbuild into dist/cli/: ESM with code
//      splitting, so `conndrain --help` reads dist/cli/main.js and one shared chunk, and each
//      command's module and implementation is a chunk of its own, loaded when it runs
//      (cli/lazy-command.ts). commander is bundled; the other packages stay in node_modules
//      (netlink-native loads its addon from its package; pino starts workers from its files).
// Runs after native/scripts/build.mjs, which compiles netlink-native's lib/ -> native/dist that
// the type-check reads. Skipped, with a line saying why, where there is nothing to build: a
// layer of an image that copied only the package files (the images run `npm run build`
// later), or an install without the devDependencies (no typescript, no esbuild). With
// --required (`npm run build`) a skip is an error.
//   node scripts/build-cli.mjs [--required] [--no-typecheck] [--outdir DIR]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: flags } = parseArgs({
  options: {
    required: { type: 'boolean', default: false },
    'no-typecheck': { type: 'boolean', default: false },
    outdir: { type: 'string', default: join(root, 'dist', 'cli') },
  },
});
const outdir = resolve(flags.outdir);

function skip(reason) {
  if (flags.required) {
    console.error(`conndrain: cannot build the CLI: ${reason}`);
    process.exit(1);
  }
  console.log(`conndrain: ${reason}; skipping the CLI build`);
  process.exit(0);
}

if (!existsSync(join(root, 'tsconfig.build.json')) || !existsSync(join(root, 'cli', 'main.ts'))) {
  skip('no CLI sources here yet (run `npm run build` once they are)');
}
const requireHere = createRequire(join(root, 'package.json'));
let tsc;
let esbuild;
try {
  tsc = requireHere.resolve('typescript/bin/tsc');
  esbuild = await import(requireHere.resolve('esbuild'));
} catch {
  skip('typescript or esbuild is not installed (--omit=dev); the CLI runs from dist/ if present');
}

if (!flags['no-typecheck']) {
  const checked = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noEmit'], { cwd: root, stdio: 'inherit' });
  if (checked.status !== 0) {
    console.error('conndrain: tsc -p tsconfig.build.json --noEmit failed');
    process.exit(1);
  }
}

/** Bundled CommonJS (commander) calls require() for node's built-in modules: give it node's. */
const REQUIRE_BANNER = "import { createRequire as __conndrainCreateRequire } from 'node:module'; const require = __conndrainCreateRequire(import.meta.url);";
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const BUNDLED = new Set(['commander']);

const staging = `${outdir}.${process.pid}.tmp`;
rmSync(staging, { recursive: true, force: true });
try {
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: 'cli/main.ts', 'kubectl-main': 'cli/kubectl-main.ts' },
    outdir: staging,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
    banner: { js: REQUIRE_BANNER },
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'warning',
  });
} catch {
  rmSync(staging, { recursive: true, force: true });
  console.error('conndrain: esbuild could not bundle the CLI');
  process.exit(1);
}
rmSync(outdir, { recursive: true, force: true });
renameSync(staging, outdir);
// What tsc emitted here before the CLI was bundled (dist/src, dist/webhook, ...): never run again.
if (outdir === join(root, 'dist', 'cli')) {
  for (const former of ['src', 'kube', 'webhook', 'agent']) rmSync(join(root, 'dist', former), { recursive: true, force: true });
}
console.log(`conndrain: CLI built into ${outdir}`);
