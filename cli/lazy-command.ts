/**
 * Commands listed by name and description, defined (options, arguments, action, subcommands)
 * only when they are about to run or show their own help. `conndrain --help` lists every
 * command from its listing alone, so it and `--version` import no command module and no
 * option spec (cli/command-listings.ts holds the listings, cli/commands/<name>.ts the rest).
 */
import { Help, type Command } from 'commander';

/** Adds a command's options, arguments, action and subcommands to the (listed) command. */
export type CommandDefinition = (command: Command) => void;

/** What the parent's help shows of a command, and where the rest of it is. */
export interface CommandListing {
  readonly name: string;
  readonly description: string;
  /** What the parent's command list shows after the name, as commander would: `[options] <scenario>`. */
  readonly usage: string;
  /** Imports the command's module (cli/commands/<name>.ts) and returns its definition. */
  readonly load: () => Promise<CommandDefinition>;
}

/** Listed commands not defined yet. */
const undefinedListings = new WeakMap<Command, CommandListing>();

const defaultHelp = new Help();

/** A command's term in its parent's command list: from its listing until it is defined. */
function subcommandTerm(command: Command): string {
  const listing = undefinedListings.get(command);
  if (listing === undefined) return defaultHelp.subcommandTerm(command);
  return listing.usage === '' ? listing.name : `${listing.name} ${listing.usage}`;
}

/** Lists `listings` under `parent` (their modules are not imported). */
export function addListedCommands(parent: Command, listings: readonly CommandListing[]): Command {
  parent.configureHelp({ ...parent.configureHelp(), subcommandTerm });
  for (const listing of listings) {
    undefinedListings.set(parent.command(listing.name).description(listing.description), listing);
  }
  return parent;
}

/** Defines one listed command now (a no-op for a command already defined); returns it. */
export async function defineListedCommand(command: Command): Promise<Command> {
  const listing = undefinedListings.get(command);
  if (listing === undefined) return command;
  const define = await listing.load();
  undefinedListings.delete(command);
  define(command);
  return command;
}

/**
 * The command `args` run (`agent ...`, or `help agent`), defined before commander parses
 * them: its options and subcommands must exist by then. The parent's own options
 * (`--help`, `--version`) take no value, so the first operand names the command.
 */
export async function defineRequestedCommand(parent: Command, args: readonly string[]): Promise<Command | undefined> {
  const operands = args.filter((arg) => !arg.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  const command = parent.commands.find((candidate) => candidate.name() === name);
  return command === undefined ? undefined : defineListedCommand(command);
}

/** Every listed command of `parent`, defined (tests, and anything that walks the whole tree). */
export async function defineAllCommands(parent: Command): Promise<Command> {
  for (const command of parent.commands) await defineListedCommand(command);
  return parent;
}
