/**
 * The `conndrain` command tree. The program lists its commands (cli/command-listings.ts) and
 * defines only the one a run names (cli/lazy-command.ts): `--help` and `--version` import no
 * command module, no option spec and no component. A command's module (cli/commands/<name>.ts)
 * imports commander and its option specs only and loads its implementation inside its action,
 * so the webhook image (no compiler, no addon) runs `conndrain webhook`.
 */
import { Command } from 'commander';
import { CONNDRAIN_LISTINGS } from './command-listings.js';
import { fixHelpWidth } from './help-width.js';
import { addListedCommands } from './lazy-command.js';
import { applyUsageErrorRule } from './usage-error.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('conndrain')
    .description('Keeps client connections alive while Kubernetes pods drain, and removes the ghost conntrack state dead pods leave behind.')
    .version(VERSION);
  return applyUsageErrorRule(addListedCommands(fixHelpWidth(program), CONNDRAIN_LISTINGS));
}
