/**
 * One rule for CLI errors, every command (docs/cli-errors.md):
 * - a usage error (bad or missing option value, unknown option or command, a missing
 *   subcommand, a bad argument) is ONE line on stderr, `conndrain <command>: <what>`, naming
 *   the option and what it accepts, and exit code 2;
 * - the help text is printed only when asked for (`--help`, `help`), never after an error;
 * - operational failures (netlink, a network namespace that does not exist, the API server...)
 *   are the commands' own CliExit(1).
 * Commander's parse errors are turned into CliExit here (exitOverride on every command); the
 * entry point prints the message and exits.
 */
import { CommanderError, type Command, type Option } from 'commander';
import { CliExit } from './exit.js';
import { acceptedKubectlFlags, isKubectlFlag } from './kube-flags.js';

/** The exit code of a usage error. */
export const USAGE_EXIT = 2;

/** `conndrain conntrack list`: the command's full name. */
export function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Commander's message as one line, without its `error: ` prefix. */
function oneLine(message: string): string {
  return message.replace(/^error:\s*/i, '').replace(/\s*\n\s*/g, ' ').trim();
}

function longFlags(command: Command): string {
  return command.options.filter((o: Option) => !o.hidden).map((o: Option) => o.long ?? o.short ?? o.flags).join(', ');
}

/** What `option '--zone <n>' argument missing` lacks: what the option takes. */
function describeMissing(command: Command, message: string): string {
  const flag = /option '([^' ]+)/.exec(message)?.[1];
  const option = command.options.find((o: Option) => o.long === flag || o.short === flag || o.flags === flag);
  return option === undefined ? message : `${message} (${option.flags}: ${option.description})`;
}

/** Why kubectl's `flag` means nothing to `command` (cli/kube-flags.ts). */
function kubectlFlagRefusal(command: Command, flag: string): string {
  const name = flag.split('=', 1)[0] ?? flag;
  const accepted = acceptedKubectlFlags(command);
  if (accepted.length === 0) return `${name} does not apply: ${command.name()} does not talk to the API server`;
  return `${name} does not apply to ${command.name()} (it takes ${accepted.join(', ')})`;
}

/** The one-line usage error for a commander error on `command`, or the exit it asks for. */
export function usageErrorOf(command: Command, error: CommanderError): CliExit {
  const path = pathOf(command);
  switch (error.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return new CliExit(0);
    case 'commander.help': {
      if (error.exitCode === 0) return new CliExit(0);
      // No subcommand given: commander would print the whole help; say what is accepted instead.
      const names = command.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).map((c) => c.name());
      return new CliExit(USAGE_EXIT, `${path}: missing command: one of ${names.join(', ')} (\`${path} --help\` describes them)`);
    }
    case 'commander.optionMissingArgument':
      return new CliExit(USAGE_EXIT, `${path}: ${describeMissing(command, oneLine(error.message))}`);
    case 'commander.unknownOption': {
      const flag = /unknown option '([^']+)'/.exec(error.message)?.[1];
      if (flag !== undefined && isKubectlFlag(flag)) return new CliExit(USAGE_EXIT, `${path}: ${kubectlFlagRefusal(command, flag)}`);
      return new CliExit(USAGE_EXIT, `${path}: ${oneLine(error.message)}; options: ${longFlags(command)}`);
    }
    case 'commander.unknownCommand':
      return new CliExit(USAGE_EXIT, `${path}: ${oneLine(error.message)}; commands: ${command.commands.map((c) => c.name()).join(', ')}`);
    default:
      return new CliExit(USAGE_EXIT, `${path}: ${oneLine(error.message)}`);
  }
}

/**
 * Applies the rule to `program` and every command under it (call after all are registered):
 * no help after an error, errors not printed by commander itself, and every commander exit
 * thrown as a CliExit with the one-line message.
 */
export function applyUsageErrorRule(program: Command): Command {
  const visit = (command: Command): void => {
    command
      .showHelpAfterError(false)
      // Errors are thrown as CliExit (below) and printed once by the entry point; writeErr only
      // carries commander's help-after-an-error (a missing subcommand), which the rule drops.
      .configureOutput({ outputError: () => undefined, writeErr: () => undefined })
      .exitOverride((error: CommanderError) => {
        throw usageErrorOf(command, error);
      });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
  return program;
}

/**
 * A usage error's message as the one line the rule promises: a multi-line message (a list of
 * configuration problems) is joined with `; `, list markers dropped.
 */
export function usageLine(message: string): string {
  const lines = message.split('\n').map((l) => l.trim().replace(/^[-*]\s+/, '')).filter((l) => l !== '');
  if (lines.length <= 1) return lines[0] ?? '';
  const [head, ...rest] = lines as [string, ...string[]];
  return `${head}${head.endsWith(':') ? ' ' : '; '}${rest.join('; ')}`;
}
