import { buildProgram } from '../../cli/program.js';

/** True once `conndrain inject` is a command (the demo shows the webhook's injection with it). */
export function isInjectCommandAvailable(): boolean {
  return buildProgram().commands.some((command) => command.name() === 'inject');
}
