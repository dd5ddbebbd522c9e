/**
 * The `conndrain` command tree: each area registers its own commands; anything that needs the
 * native addon loads it lazily inside its action, so the webhook image (no compiler, no addon)
 * runs `conndrain webhook` without it.
 */
import { Command } from 'commander';
import { registerWebhookCommands } from '../webhook/commands.js';
import { registerAgentCommands } from '../agent/commands.js';
import { registerNetlinkCommands } from './netlink-commands.js';
import { registerLabCommands } from './lab-commands.js';
import { registerDoctorCommands } from './doctor-commands.js';
import { applyUsageErrorRule } from './usage-error.js';

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
