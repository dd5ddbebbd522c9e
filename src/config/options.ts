import { parseDurationMs } from '../duration.js';
import { fail, ok, type Result } from '../result.js';

/**
 * One option of a component: its flag, its environment variable, its default and how it is
 * parsed. The CLI builds its flags from these specs and the manifests' tests check their
 * flags against them, so a flag exists in exactly one place.
 */
export type OptionSpec =
  | { kind: 'string'; flag: string; env: string; description: string; default?: string; required?: boolean }
  | { kind: 'int'; flag: string; env: string; description: string; default: number; min: number; max: number }
  | { kind: 'duration'; flag: string; env: string; description: string; default: string; minMs: number; maxMs: number }
  | { kind: 'bool'; flag: string; env: string; description: string; default: boolean }
  | { kind: 'enum'; flag: string; env: string; description: string; default: string; values: readonly string[] };

export type OptionValue = string | number | boolean | undefined;

/** Raw inputs: flag values by flag name (commander's camelCase or kebab) and the environment. */
export interface ConfigSources {
  flags: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m: string, c: string) => c.toUpperCase());
}

function rawValue(spec: OptionSpec, sources: ConfigSources): { raw: unknown; from: string } | undefined {
  const flagValue = sources.flags[camel(spec.flag)] ?? sources.flags[spec.flag];
  if (flagValue !== undefined) return { raw: flagValue, from: `--${spec.flag}` };
  const envValue = sources.env[spec.env];
  if (envValue !== undefined && envValue !== '') return { raw: envValue, from: `$${spec.env}` };
  return undefined;
}

function parseBool(raw: unknown): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  const text = String(raw).trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  return undefined;
}

/** Parses one option; durations come back in milliseconds. */
export function parseOption(spec: OptionSpec, sources: ConfigSources): Result<OptionValue, string> {
  const found = rawValue(spec, sources);
  const from = found?.from ?? 'default';
  const say = (why: string): Result<OptionValue, string> => fail(`${from === 'default' ? `--${spec.flag}` : from}: ${why}`);
  switch (spec.kind) {
    case 'string': {
      const value = found === undefined ? spec.default : String(found.raw);
      if ((value === undefined || value === '') && spec.required === true) {
        return fail(`--${spec.flag} (or $${spec.env}) is required: ${spec.description}`);
      }
      return ok(value);
    }
    case 'int': {
      const value = found === undefined ? spec.default : Number(found.raw);
      if (!Number.isInteger(value)) return say(`"${String(found?.raw)}" is not a whole number`);
      if (value < spec.min || value > spec.max) return say(`${value} is out of range; expected ${spec.min}..${spec.max}`);
      return ok(value);
    }
    case 'duration': {
      const text = found === undefined ? spec.default : String(found.raw);
      const parsed = parseDurationMs(text);
      if (!parsed.ok) return say(parsed.error);
      if (parsed.value < spec.minMs || parsed.value > spec.maxMs) {
        return say(`"${text}" is out of range; expected ${spec.minMs} ms to ${spec.maxMs} ms`);
      }
      return ok(parsed.value);
    }
    case 'bool': {
      if (found === undefined) return ok(spec.default);
      const value = parseBool(found.raw);
      if (value === undefined) return say(`"${String(found.raw)}" is not true or false`);
      return ok(value);
    }
    case 'enum': {
      const value = found === undefined ? spec.default : String(found.raw);
      if (!spec.values.includes(value)) return say(`"${value}" is not one of ${spec.values.join(', ')}`);
      return ok(value);
    }
  }
}

/**
 * Parses every option of a component. All problems are reported together, each naming the
 * flag or variable it came from, so an operator fixes a DaemonSet in one edit.
 */
export function parseOptions(specs: Readonly<Record<string, OptionSpec>>, sources: ConfigSources): Result<Record<string, OptionValue>, string[]> {
  const values: Record<string, OptionValue> = {};
  const problems: string[] = [];
  for (const [key, spec] of Object.entries(specs)) {
    const parsed = parseOption(spec, sources);
    if (parsed.ok) values[key] = parsed.value;
    else problems.push(parsed.error);
  }
  return problems.length > 0 ? fail(problems) : ok(values);
}
