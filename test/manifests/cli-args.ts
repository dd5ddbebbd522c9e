/**
 * Reads a container's args (`[subcommand, --flag=value, --flag value, --no-flag]`) the way
 * commander does, and checks the flags against a component's option specs (src/config).
 */
import type { OptionSpec } from '../../src/config/options.js';

export interface ParsedArgs {
  command: string | undefined;
  /** Flag name (without dashes) -> raw value; `--no-x` is recorded as x = "false". */
  flags: Map<string, string>;
  problems: string[];
}

export function parseArgs(args: readonly string[], specs: Readonly<Record<string, OptionSpec>>): ParsedArgs {
  const byFlag = new Map(Object.values(specs).map((s) => [s.flag, s]));
  const flags = new Map<string, string>();
  const problems: string[] = [];
  const [command, ...rest] = args;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (!arg.startsWith('--')) {
      problems.push(`"${arg}" is not a flag`);
      continue;
    }
    const [rawName = '', inlineValue] = arg.slice(2).split(/=(.*)/s, 2);
    const negated = rawName.startsWith('no-') && byFlag.get(rawName.slice(3))?.kind === 'bool';
    const name = negated ? rawName.slice(3) : rawName;
    const spec = byFlag.get(name);
    if (spec === undefined) {
      problems.push(`--${rawName} is not an option (known: ${[...byFlag.keys()].join(', ')})`);
      continue;
    }
    let value = negated ? 'false' : inlineValue;
    if (value === undefined && spec.kind !== 'bool') value = rest[++i];
    if (value === undefined) value = 'true';
    if (spec.kind === 'enum' && !spec.values.includes(value)) problems.push(`--${name}=${value}: not one of ${spec.values.join(', ')}`);
    if (spec.kind === 'int' && !(Number.isInteger(Number(value)) && Number(value) >= spec.min && Number(value) <= spec.max)) problems.push(`--${name}=${value}: not a whole number in ${spec.min}..${spec.max}`);
    if (flags.has(name)) problems.push(`--${name} given twice`);
    flags.set(name, value);
  }
  return { command, flags, problems };
}

/** The effective integer value of an option: the flag if given, else the spec's default. */
export function intOption(parsed: ParsedArgs, spec: OptionSpec): number {
  if (spec.kind !== 'int') throw new Error(`--${spec.flag} is not an int option`);
  const raw = parsed.flags.get(spec.flag);
  return raw === undefined ? spec.default : Number(raw);
}

/** The effective string value of an option: the flag if given, else the spec's default. */
export function stringOption(parsed: ParsedArgs, spec: OptionSpec): string | undefined {
  const raw = parsed.flags.get(spec.flag);
  if (raw !== undefined) return raw;
  return 'default' in spec && spec.default !== undefined ? String(spec.default) : undefined;
}
