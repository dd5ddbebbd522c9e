/**
 * Runs a command tree as a process: the one place (with its entry points cli/main.ts and
 * cli/kubectl-main.ts) that turns CliExit and commander's errors into an exit status.
 */
import type { Command } from 'commander';
import { CliExit } from './exit.js';

export async function runProgram(program: Command, name: string): Promise<void> {
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CliExit) {
      if (error.message !== '') process.stderr.write(`${error.message}\n`);
      process.exit(error.exitCode);
    }
    const commanderCode = (error as { code?: string }).code;
    if (typeof commanderCode === 'string' && commanderCode.startsWith('commander.')) {
      process.exit((error as { exitCode?: number }).exitCode ?? 1);
    }
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
