#!/usr/bin/env node
/**
 * The `conndrain` CLI: the one entry point for every part (cli/program.ts). `--version` is
 * answered here; anything else loads the program, which loads the command it names.
 */
import { tolerateClosedReaders } from './closed-pipe.js';
import { isVersionRequest, VERSION } from './version.js';

tolerateClosedReaders();

if (isVersionRequest(process.argv.slice(2))) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const [{ buildProgram }, { runProgram }] = await Promise.all([import('./program.js'), import('./run.js')]);
  await runProgram(buildProgram(), 'conndrain');
}
