import { buildProgram } from '../../cli/program.js';

/** True once `conndrain agent` is a command (the lab's "with conndrain" runs need the real agent). */
export function isAgentCommandAvailable(): boolean {
  return buildProgram().commands.some((command) => command.name() === 'agent');
}
