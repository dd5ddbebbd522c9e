#!/usr/bin/env node
/** The `kubectl-conndrain` entry point (kubectl plugin): cli/kubectl-plugin.ts. */
import { buildPluginProgram } from './kubectl-plugin.js';
import { runProgram } from './run.js';

await runProgram(buildPluginProgram(), 'kubectl conndrain');
