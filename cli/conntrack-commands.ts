import type { Command } from 'commander';

/** Placeholder until this area's commands land. */
export function registerConntrackCommands(_program: Command): void {
  // commands are registered here
}
