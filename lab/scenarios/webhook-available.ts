import { Command } from 'commander';
import { registerInjectCommand } from '../../cli/commands/inject.js';

/** True once `conndrain inject` is registered (the demo shows the webhook's injection with it). */
export function isInjectCommandAvailable(): boolean {
  const program = new Command('conndrain');
  registerInjectCommand(program);
  return program.commands.some((command) => command.name() === 'inject');
}
