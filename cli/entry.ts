/**
 * What both entry points (cli/main.ts, cli/kubectl-main.ts) do: keep a closed pipe from
 * crashing the process, answer `--version` before commander or any command is loaded, and
 * otherwise load the program (`load`), which loads the command it names.
 */
import type { Command } from 'commander';
import type { RunOptions } from './run.js';
import { tolerateClosedReaders } from './closed-pipe.js';
import { isVersionRequest, VERSION } from './version.js';

export async function startCli(load: () => Promise<Command>, name: string, options: RunOptions = {}): Promise<void> {
  tolerateClosedReaders();
  if (isVersionRequest(process.argv.slice(2))) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const [program, { runProgram }] = await Promise.all([load(), import('./run.js')]);
  await runProgram(program, name, options);
}
