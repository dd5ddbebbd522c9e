/**
 * The `conndrain` command tree. Each command lives in cli/commands/<name>.ts, which registers
 * its name, description and options with cheap imports only (commander, the option specs of
 * src/config) and loads its implementation inside its action: `--help` and `--version` load
 * no component, and the webhook image (no compiler, no addon) runs `conndrain webhook`.
 */
import { Command } from 'commander';
import { registerAgentCommand } from './commands/agent.js';
import { registerConntrackCommands } from './commands/conntrack.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerInjectCommand } from './commands/inject.js';
import { registerIpvsCommands } from './commands/ipvs.js';
import { registerLabCommands } from './commands/lab.js';
import { registerReviewCommand } from './commands/review.js';
import { registerWebhookCommand } from './commands/webhook.js';
import { applyUsageErrorRule } from './usage-error.js';

export function buildProgram(): Command {
  const program = new Command('conndrain')
    .description('Keeps client connections alive while Kubernetes pods drain, and removes the ghost conntrack state dead pods leave behind.')
    .version('0.1.0');
  registerInjectCommand(program);
  registerReviewCommand(program);
  registerWebhookCommand(program);
  registerAgentCommand(program);
  registerConntrackCommands(program);
  registerIpvsCommands(program);
  registerLabCommands(program);
  registerDoctorCommand(program);
  return applyUsageErrorRule(program);
}
