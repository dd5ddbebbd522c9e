/**
 * Runs a command tree as a process: the one place (with its entry points cli/main.ts and
 * cli/kubectl-main.ts) that turns CliExit and commander's errors into an exit status.
 */
import type { Command } from 'commander';
import { CliExit } from './exit.js';
import { exitAfterOutput } from './flush.js';
import { moveKubectlFlagsAfterCommand } from './kube-flags.js';
import { defineRequestedCommand } from './lazy-command.js';
import { applyUsageErrorRule, USAGE_EXIT, usageLine } from './usage-error.js';

/** How a program reads its command line. */
export interface RunOptions {
  /** kubectl's flags may come before the command's name (`kubectl conndrain -n shop check`): a kubectl plugin's. */
  kubectlFlagsFirst?: boolean;
}

export async function runProgram(program: Command, name: string, options: RunOptions = {}): Promise<void> {
  try {
    let args = process.argv.slice(2);
    if (options.kubectlFlagsFirst === true) args = moveKubectlFlagsAfterCommand(args, new Set(program.commands.map((command) => command.name())));
    // Only the command this run names is defined (imported); the rule covers what it adds.
    const requested = await defineRequestedCommand(program, args);
    if (requested !== undefined) applyUsageErrorRule(requested);
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    // Every way out waits for stdout/stderr to be written: `conndrain inject ... | kubectl
    // apply -f -` must get the whole output even when inject exits 1.
    if (error instanceof CliExit) {
      const text = error.exitCode === USAGE_EXIT ? usageLine(error.message) : error.message;
      if (text !== '') process.stderr.write(`${text}\n`);
      await exitAfterOutput(error.exitCode);
    }
    const commanderCode = (error as { code?: string }).code;
    if (typeof commanderCode === 'string' && commanderCode.startsWith('commander.')) {
      await exitAfterOutput((error as { exitCode?: number }).exitCode ?? 1);
    }
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    await exitAfterOutput(1);
  }
}
