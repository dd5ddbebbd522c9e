#!/usr/bin/env node
/**
 * The `conndrain` CLI: the one entry point for every part. Each area registers its own
 * commands; anything that needs the native addon loads it lazily inside its action, so the
 * webhook image (no compiler, no addon) runs `conndrain webhook` without it.
 */
import { Command } from 'commander';
import { registerWebhookCommands } from '../webhook/commands.js';
import { registerAgentCommands } from '../agent/commands.js';
import { registerNetlinkCommands } from './netlink-commands.js';
import { registerLabCommands } from './lab-commands.js';
import { registerDoctorCommands } from './doctor-commands.js';
import { CliExit } from './exit.js';
import { applyUsageErrorRule, USAGE_EXIT, usageLine } from './usage-error.js';
import { exitAfterOutput } from './flush.js';

export function buildProgram(): Command {
  const program = new Command('conndrain')
    .description('Keeps client connections alive while Kubernetes pods drain, and removes the ghost conntrack state dead pods leave behind.')
    .version('0.1.0');
  registerWebhookCommands(program);
  registerAgentCommands(program);
  registerNetlinkCommands(program);
  registerLabCommands(program);
  registerDoctorCommands(program);
  return applyUsageErrorRule(program);
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
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
    process.stderr.write(`conndrain: ${error instanceof Error ? error.message : String(error)}\n`);
    await exitAfterOutput(1);
  }
}

await main();
