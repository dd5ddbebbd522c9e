import { ok, type Result } from '../result.js';
import { parseOptions, type ConfigSources, type OptionSpec, type OptionValue } from './options.js';

/** The config field of an option: its key, with `Ms` after a duration's (parsed to milliseconds). */
export type ConfigKey<K extends string, S extends OptionSpec> = S extends { kind: 'duration' } ? `${K}Ms` : K;

/**
 * The parsed value of an option, by its kind: a string with a default or `required` is always
 * set (an optional one may be unset), an int or a duration (in ms) is a number, an enum is one
 * of its values.
 */
export type ConfigValue<S extends OptionSpec> = S extends { kind: 'string' }
  ? S extends { required: true } | { default: string }
    ? string
    : string | undefined
  : S extends { kind: 'int' | 'duration' }
    ? number
    : S extends { kind: 'bool' }
      ? boolean
      : S extends { kind: 'enum'; values: readonly (infer V)[] }
        ? V
        : never;

/** The config a component's option specs (an `as const` object) parse into: one field per option. */
export type ConfigOf<Specs extends Readonly<Record<string, OptionSpec>>> = {
  -readonly [K in keyof Specs & string as ConfigKey<K, Specs[K]>]: ConfigValue<Specs[K]>;
};

/** The config field an option's value goes to at run time (what ConfigKey says at compile time). */
export function configKey(key: string, spec: OptionSpec): string {
  return spec.kind === 'duration' ? `${key}Ms` : key;
}

/** Parses every option (parseOptions) and names each value by its config field. */
export function parseConfig<Specs extends Readonly<Record<string, OptionSpec>>>(specs: Specs, sources: ConfigSources): Result<ConfigOf<Specs>, string[]> {
  const parsed = parseOptions(specs, sources);
  if (!parsed.ok) return parsed;
  const config: Record<string, OptionValue> = {};
  for (const [key, spec] of Object.entries(specs)) config[configKey(key, spec)] = parsed.value[key];
  // parseOption returns each kind's value type (string / number / boolean / one of the values),
  // which is what ConfigValue says; config-of.test.ts pins both sides.
  return ok(config as ConfigOf<Specs>);
}
