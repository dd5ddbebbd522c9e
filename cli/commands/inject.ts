import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { INJECT_OPTIONS, loadWebhookCliConfig, readInput } from '../webhook-input.js';

/** `conndrain inject`: manifests rewritten the way the webhook would mutate them (webhook/inject-manifests.ts). */
export function defineInjectCommand(inject: Command): void {
  inject.option('-f, --filename <file>', 'manifest file to read, or - for stdin', '-');
  addConfigOptions(inject, INJECT_OPTIONS);
  inject.addHelpText('after', `
Examples:
  $ conndrain inject -f deployment.yaml | kubectl apply -f -
  $ kubectl get deploy web -o yaml | conndrain inject --default-hook agent

Exit status: 0 when every resource was rewritten or left alone on purpose, 1 when a resource has
invalid conndrain.io annotations (it is written unchanged; the reason goes to stderr), 2 when
the input cannot be read or parsed (nothing is written).`);
  inject.action(async (flags: Record<string, unknown>) => {
    const config = loadWebhookCliConfig(flags);
    const text = await readInput(typeof flags['filename'] === 'string' ? flags['filename'] : '-');
    const { injectManifests, ManifestError } = await import('../../webhook/inject-manifests.js');
    let result;
    try {
      result = injectManifests(text, config, (n: number) => randomBytes(n));
    } catch (error) {
      if (error instanceof ManifestError) throw new CliExit(2, `conndrain inject: ${error.message}; nothing was written`);
      throw error;
    }
    process.stdout.write(result.output);
    for (const line of result.messages) process.stderr.write(`${line}\n`);
    if (result.invalid > 0 && config.onInvalid === 'deny') {
      throw new CliExit(1, `conndrain inject: ${result.invalid} resource(s) have invalid drain annotations and were left unchanged (the webhook would deny such pods)`);
    }
  });
}
