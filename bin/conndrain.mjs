#!/usr/bin/env node
// The `conndrain` command, and through bin/kubectl-conndrain.mjs the kubectl plugin: the one
// launcher for both. It imports this file as `./conndrain.mjs?entry=kubectl-main`; the query
// names the entry point (cli/main.ts or cli/kubectl-main.ts). Runs the compiled CLI when it is
// built (dist/cli: `npm ci`, `npm run build`, the images), else the TypeScript through tsx.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const entry = new URL(import.meta.url).searchParams.get('entry') === 'kubectl-main' ? 'kubectl-main' : 'main';
const compiled = new URL(`../dist/cli/${entry}.js`, import.meta.url);
if (existsSync(fileURLToPath(compiled))) {
  // Node 22.1+ keeps V8's compiled code of the bundle on disk (NODE_COMPILE_CACHE picks the
  // directory, NODE_DISABLE_COMPILE_CACHE=1 turns it off); where the directory is not
  // writable it stays off. Node 20 has no such cache.
  try {
    module.enableCompileCache?.();
  } catch {
    // no cache: the CLI runs the same, only compiles again
  }
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL(`../cli/${entry}.ts`, import.meta.url).href);
}
