import { Option, type Command } from 'commander';
import type { OptionSpec } from '../src/config/options.js';

/** Adds a component's options (src/config) to a command as flags; env and defaults stay in the loader. */
export function addConfigOptions(command: Command, specs: Readonly<Record<string, OptionSpec>>): Command {
  for (const spec of Object.values(specs)) {
    const def = 'default' in spec && spec.default !== undefined ? ` (default: ${String(spec.default)})` : '';
    const help = `${spec.description}; env ${spec.env}${def}`;
    if (spec.kind === 'bool') {
      command.addOption(new Option(`--${spec.flag} [bool]`, help).argParser((v: string) => v));
      command.addOption(new Option(`--no-${spec.flag}`, `same as --${spec.flag}=false`).hideHelp());
    } else {
      const option = new Option(`--${spec.flag} <value>`, help);
      if (spec.kind === 'enum') option.choices(spec.values);
      command.addOption(option);
    }
  }
  return command;
}
