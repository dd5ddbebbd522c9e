import type { Command } from 'commander';

/** Placeholder until this area's commands land. */
export function registerWebhookCommands(_program: Command): void {
  // commands are registered here
}
