import type { Command } from 'commander';

/** Placeholder until `conndrain doctor` lands. */
export function registerDoctorCommands(_program: Command): void {
  // commands are registered here
}
