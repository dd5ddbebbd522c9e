import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { pathOf, USAGE_EXIT } from '../usage-error.js';
import { INJECT_OPTIONS, loadWebhookCliConfig } from '../webhook/input.js';

/** `-f a -f b`: every value kept, in order (commander keeps only the last by default). */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Where one input's output ends and the next one's begins: a document separator, on a line of its own. */
function joinOutputs(outputs: readonly string[]): string {
  let joined = '';
  for (const output of outputs) {
    if (joined !== '' && !joined.endsWith('\n')) joined += '\n';
    if (joined !== '' && !output.startsWith('---')) joined += '---\n';
    joined += output;
  }
  return joined;
}

/** `conndrain inject`: manifests rewritten the way the webhook would mutate them (cli/manifest/inject-manifests.ts). */
export function defineInjectCommand(inject: Command): void {
  inject.addOption(
    new Option('-f, --filename <file>', 'manifest file, directory (its .yaml, .yml and .json files) or - for stdin; repeat for more, read in order')
      .argParser(collect)
      .default([], 'stdin'),
  );
  inject.option('-R, --recursive', 'read the directories given with -f and their subdirectories');
  addConfigOptions(inject, INJECT_OPTIONS);
  inject.addHelpText('after', `
Examples:
  $ conndrain inject -f deployment.yaml | kubectl apply -f -
  $ conndrain inject -f base/ -f overlays/prod/patch.yaml -R
  $ kubectl get deploy web -o yaml | conndrain inject --default-hook agent

Exit status: 0 when every resource was rewritten or left alone on purpose, 1 when a resource has
invalid conndrain.io annotations (it is written unchanged; the reason goes to stderr), 2 when
an input cannot be read, is not YAML or JSON, or holds something that is not a Kubernetes
object (one line, FILE:LINE:COL: what; nothing is written).`);
  inject.action(async (flags: Record<string, unknown>, command: Command) => {
    const config = loadWebhookCliConfig(flags);
    const [{ readManifestInputs }, { checkManifest }, { injectManifests, ManifestError }] = await Promise.all([
      import('../manifest/input.js'),
      import('../manifest/check.js'),
      import('../manifest/inject-manifests.js'),
    ]);
    const who = pathOf(command);
    const filenames = Array.isArray(flags['filename']) ? (flags['filename'] as string[]) : [];
    const inputs = await readManifestInputs(filenames, flags['recursive'] === true, who);
    // Every input is checked before anything is written: a bad one leaves stdout empty.
    for (const input of inputs) checkManifest(input);
    const outputs: string[] = [];
    const messages: string[] = [];
    let invalid = 0;
    for (const input of inputs) {
      try {
        const result = injectManifests(input.text, config, (n: number) => randomBytes(n));
        outputs.push(result.output);
        // With several inputs a note names its file: the same object name may be in two of them.
        messages.push(...(inputs.length > 1 ? result.messages.map((line) => line.replace(/^conndrain: /, `conndrain: ${input.name}: `)) : result.messages));
        invalid += result.invalid;
      } catch (error) {
        if (error instanceof ManifestError) throw new CliExit(USAGE_EXIT, `${input.name}: ${error.message}; nothing was written`);
        throw error;
      }
    }
    process.stdout.write(joinOutputs(outputs));
    for (const line of messages) process.stderr.write(`${line}\n`);
    if (invalid > 0 && config.onInvalid === 'deny') {
      throw new CliExit(1, `${who}: ${invalid} resource(s) have invalid drain annotations and were left unchanged (the webhook would deny such pods)`);
    }
  });
}
