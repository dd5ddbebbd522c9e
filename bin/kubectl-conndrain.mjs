#!/usr/bin/env node
// kubectl plugin `kubectl conndrain` (cli/kubectl-plugin.ts). Runs the compiled CLI when built (images, `npm run build`), else the TypeScript through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/kubectl-main.js', import.meta.url));
if (existsSync(compiled)) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../cli/kubectl-main.ts', import.meta.url).href);
}
