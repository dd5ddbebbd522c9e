/**
 * kubectl's connection flags, for the commands that talk to the API server: `--kubeconfig`,
 * `--context`, `-n/--namespace`. A command adds the ones that mean something to it; the
 * others are refused with a line that says why (cli/usage-error.ts), not ignored, so
 * `kubectl conndrain -n shop inject` cannot look as if it had done something in `shop`.
 * kubectl passes a plugin every argument as given, its global flags before the plugin's
 * command included (`kubectl conndrain --context prod stale`): those are moved after the
 * command's name, where the command reads them, before the command line is parsed.
 */
import { Option, type Command } from 'commander';

export type KubeFlag = 'kubeconfig' | 'context' | 'namespace';

/** The flags as kubectl spells them, and whether the next argument is their value. */
const KUBECTL_FLAGS: ReadonlyMap<string, KubeFlag> = new Map([
  ['--kubeconfig', 'kubeconfig'],
  ['--context', 'context'],
  ['--namespace', 'namespace'],
  ['-n', 'namespace'],
]);

/** `--context=prod` or `--context`: the flag's name, if it is one of kubectl's. */
function kubectlFlagOf(arg: string): string | undefined {
  const name = arg.startsWith('--') ? arg.split('=', 1)[0] ?? arg : arg;
  return KUBECTL_FLAGS.has(name) ? name : undefined;
}

/** Whether `arg` (an unknown option commander reports) is one of kubectl's connection flags. */
export function isKubectlFlag(arg: string): boolean {
  return kubectlFlagOf(arg) !== undefined;
}

/**
 * `-n shop --context prod check --json` -> `check -n shop --context prod --json`: kubectl's
 * flags given before the command name, moved after it. Anything else before the name (the
 * program's own `--help`, `--version`, an unknown flag) stays where it is.
 */
export function moveKubectlFlagsAfterCommand(args: readonly string[], commandNames: ReadonlySet<string>): string[] {
  const moved: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (commandNames.has(arg)) {
      return [...rest, arg, ...moved, ...args.slice(i + 1)];
    }
    const flag = kubectlFlagOf(arg);
    if (flag === undefined || arg.includes('=')) {
      (flag === undefined ? rest : moved).push(arg);
      continue;
    }
    moved.push(arg);
    const value = args[i + 1];
    if (value !== undefined) {
      moved.push(value);
      i++;
    }
  }
  return [...args];
}

const DEFAULT_OPTIONS: Readonly<Record<KubeFlag, Option>> = {
  kubeconfig: new Option('--kubeconfig <file>', 'the kubeconfig file (default: $KUBECONFIG, else in-cluster from the service account)'),
  context: new Option('--context <name>', 'the kubeconfig context to use (default: its current-context)'),
  namespace: new Option('-n, --namespace <name>', 'the namespace'),
};

/**
 * Adds the kubectl flags named in `flags` to `command`, each with the description given (what
 * it means for this command) or a default one when the description is ''.
 */
export function addKubeFlags(command: Command, flags: Readonly<Partial<Record<KubeFlag, string>>>): Command {
  for (const [flag, description] of Object.entries(flags) as Array<[KubeFlag, string]>) {
    const template = DEFAULT_OPTIONS[flag];
    command.addOption(new Option(template.flags, description === '' ? template.description : description));
  }
  return command;
}

/** The names of kubectl's flags `command` accepts (`--context`, `-n`, ...). */
export function acceptedKubectlFlags(command: Command): string[] {
  return command.options.flatMap((option) => [option.long, option.short]).filter((name): name is string => name !== undefined && KUBECTL_FLAGS.has(name));
}
