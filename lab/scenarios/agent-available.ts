import { Command } from 'commander';
import { registerAgentCommand } from '../../cli/commands/agent.js';

/** True once `conndrain agent` is registered (the lab's "with conndrain" runs need the real agent). */
export function isAgentCommandAvailable(): boolean {
  const program = new Command('conndrain');
  registerAgentCommand(program);
  return program.commands.some((command) => command.name() === 'agent');
}
