import type { Command } from 'commander';
import { registerConntrackCommands } from './conntrack-commands.js';
import { registerIpvsCommands } from './ipvs-commands.js';

/** `conndrain conntrack ...` and `conndrain ipvs ...`: node-side netlink tools (load the addon lazily). */
export function registerNetlinkCommands(program: Command): void {
  registerConntrackCommands(program);
  registerIpvsCommands(program);
}
