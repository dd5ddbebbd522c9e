#!/usr/bin/env node
/** The `kubectl-conndrain` entry point (kubectl plugin): cli/kubectl-plugin.ts; cli/entry.ts. */
import { startCli } from './entry.js';

await startCli(async () => (await import('./kubectl-plugin.js')).buildPluginProgram(), 'kubectl conndrain', { kubectlFlagsFirst: true });
