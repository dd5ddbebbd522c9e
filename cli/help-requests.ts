/**
 * Every argument list that only asks a command tree for its help or its version, as commander
 * answers them: `--version`, `-V`; `--help`, `-h` and `help` at the top; `<command> --help`,
 * `<command> -h` and `help <command>` for each command; the same one level down
 * (`conntrack list --help`, `conntrack help list`). scripts/build-cli.mjs runs the compiled
 * CLI with each of them and writes what it prints into the table the launcher answers from
 * (bin/fast-answers.cjs). Aliases and other spellings are not listed: they go through
 * commander, only slower.
 */
import type { Command } from 'commander';
import { defineAllCommands } from './lazy-command.js';

/** The flags of `command`'s option whose long flag is `long` (`--help` -> `['--help', '-h']`). */
function flagsOf(command: Command, long: string): string[] {
  const option = command.createHelp().visibleOptions(command).find((candidate) => candidate.long === long);
  return option === undefined ? [] : [option.long, option.short].filter((flag): flag is string => flag !== undefined);
}

/** Whether commander gives `command` its implicit `help [command]` subcommand. */
function hasHelpCommand(command: Command): boolean {
  return command.createHelp().visibleCommands(command).some((candidate) => candidate.name() === 'help' && !command.commands.includes(candidate));
}

async function collect(command: Command, path: readonly string[], requests: string[][]): Promise<void> {
  await defineAllCommands(command);
  for (const flag of flagsOf(command, '--help')) requests.push([...path, flag]);
  const subcommands = command.commands.filter((sub) => sub.name() !== 'help');
  if (hasHelpCommand(command)) {
    requests.push([...path, 'help']);
    for (const sub of subcommands) requests.push([...path, 'help', sub.name()]);
  }
  for (const sub of subcommands) await collect(sub, [...path, sub.name()], requests);
}

/** The help and version requests of `program`, every command defined to find them. */
export async function listHelpRequests(program: Command): Promise<string[][]> {
  const requests = flagsOf(program, '--version').map((flag) => [flag]);
  await collect(program, [], requests);
  return requests;
}
