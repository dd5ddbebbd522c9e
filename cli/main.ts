#!/usr/bin/env node
/** The `conndrain` CLI: the one entry point for every part (cli/program.ts). */
import { buildProgram } from './program.js';
import { runProgram } from './run.js';

export { buildProgram };

await runProgram(buildProgram(), 'conndrain');
