/**
 * Whether a command line a page shows names commands and flags the CLI has: the arguments
 * after the program's name are walked down a defined commander tree the way commander reads
 * them (subcommands first, then options and operands). Notation the docs use for more than
 * one line is read as such: `[--flag VALUE]` is the flag, `list/weight` both subcommands,
 * `help <command>` the command's help; `<command>`, `...` and anything after `--` are left
 * unchecked (placeholders and the program's operands).
 */
import type { Command, Option } from 'commander';

/** `[--push]` -> `--push`, `linux/arm64]` -> `linux/arm64`. */
function unbracket(word: string): string {
  return word.replace(/^\[+/, '').replace(/\]+$/, '');
}

/** `<command>`, `...`, `FILE`: a word that stands for others. */
export function isPlaceholder(word: string): boolean {
  return /^<.*>$/.test(word) || word === '...' || /^[A-Z][A-Z0-9_]*$/.test(word);
}

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The option `flag` (`--zone`, `-f`) of `command` or of a command above it. */
function findOption(command: Command, flag: string): Option | undefined {
  for (let c: Command | null = command; c !== null; c = c.parent) {
    const option = c.options.find((o) => o.long === flag || o.short === flag);
    if (option !== undefined) return option;
  }
  return undefined;
}

function subcommand(command: Command, name: string): Command | undefined {
  return command.commands.find((c) => c.name() === name || c.aliases().includes(name));
}

/** Why `args` (what follows the program's name) is not a command line of `program`; undefined when it is. */
export function checkArguments(program: Command, args: readonly string[]): string | undefined {
  let command = program;
  let operands = 0;
  const words = args.map(unbracket).filter((word) => word !== '');
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (word === '--' || word === '...') return undefined;
    if (word.startsWith('-') && word !== '-') {
      const [flag = word, inline] = word.startsWith('--') ? word.split(/=(.*)/s) : [word];
      if (flag === '--help' || flag === '-h') continue;
      const option = findOption(command, flag);
      if (option === undefined) return `\`${pathOf(command)}\` has no option ${flag}`;
      if (inline === undefined && (option.required || (option.optional && !(words[i + 1] ?? '-').startsWith('-')))) i++;
      continue;
    }
    if (operands === 0 && command.commands.length > 0) {
      if (isPlaceholder(word)) return undefined;
      if (word === 'help') {
        // `help agent` is `agent --help`: what follows must name commands.
        return checkArguments(command, [...words.slice(i + 1).filter((w) => !w.startsWith('-')), '--help']);
      }
      const alternatives = word.split('/').filter((w) => w !== '...');
      const found = alternatives.map((name) => subcommand(command, name));
      const missing = alternatives.filter((_, k) => found[k] === undefined);
      if (missing.length > 0) {
        if (command.registeredArguments.length > 0 && alternatives.length === 1) {
          operands++;
          continue;
        }
        return `\`${pathOf(command)}\` has no command ${missing.join(', ')} (it has ${command.commands.map((c) => c.name()).join(', ')})`;
      }
      if (found.length > 1) return undefined;
      command = found[0] ?? command;
      continue;
    }
    operands++;
    const declared = command.registeredArguments;
    if (operands > declared.length && declared.at(-1)?.variadic !== true && !isPlaceholder(word)) {
      return `\`${pathOf(command)}\` takes ${declared.length === 0 ? 'no argument' : `${declared.length} argument(s)`}, but is given ${word}`;
    }
  }
  return undefined;
}
