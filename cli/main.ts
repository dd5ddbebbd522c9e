#!/usr/bin/env node
/** The `conndrain` CLI: the one entry point for every part (cli/program.ts; cli/entry.ts). */
import { startCli } from './entry.js';

await startCli(async () => (await import('./program.js')).buildProgram(), 'conndrain');
