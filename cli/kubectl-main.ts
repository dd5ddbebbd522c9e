#!/usr/bin/env node
/** The `kubectl-conndrain` entry point (kubectl plugin): cli/kubectl-plugin.ts. `--version` is answered here. */
import { tolerateClosedReaders } from './closed-pipe.js';
import { isVersionRequest, VERSION } from './version.js';

tolerateClosedReaders();

if (isVersionRequest(process.argv.slice(2))) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const [{ buildPluginProgram }, { runProgram }] = await Promise.all([import('./kubectl-plugin.js'), import('./run.js')]);
  await runProgram(buildPluginProgram(), 'kubectl conndrain');
}
