import { Command } from 'commander';
import { registerWebhookCommands } from '../../webhook/commands.js';

/** True once `conndrain inject` is registered (the demo shows the webhook's injection with it). */
export function isInjectCommandAvailable(): boolean {
  const program = new Command('conndrain');
  registerWebhookCommands(program);
  return program.commands.some((command) => command.name() === 'inject');
}
