import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { pathOf, USAGE_EXIT } from '../usage-error.js';
import { INJECT_OPTIONS, loadWebhookCliConfig } from '../webhook/input.js';

/** `conndrain review`: the AdmissionReview response the webhook would send (webhook/http/admit.ts, webhook/http/review.ts). */
export function defineReviewCommand(review: Command): void {
  addConfigOptions(review, INJECT_OPTIONS);
  review.addHelpText('after', `
Example:
  $ conndrain review < admission-review.json | jq -r .response.patch | base64 -d | jq .

Exit status (as inject's): 0 when the response allows the pod, 1 when it denies it (invalid
conndrain.io annotations with --on-invalid deny; the response is written, the reason goes to
stderr), 2 when the input is not a v1 AdmissionReview the webhook would answer (not JSON, no
request.uid...: one line on stderr, nothing on stdout; the webhook answers such a request
with a 4xx Status).`);
  review.action(async (flags: Record<string, unknown>, command: Command) => {
    const config = loadWebhookCliConfig(flags);
    const who = pathOf(command);
    const [{ decodeManifest, readStdin, STDIN_NAME }, { admitReview }, { encodeReview }, { DrainHookInjection }] = await Promise.all([
      import('../manifest/input.js'),
      import('../../webhook/http/admit.js'),
      import('../../webhook/http/review.js'),
      import('../../webhook/admission/drain-hook.js'),
    ]);
    const text = decodeManifest(STDIN_NAME, await readStdin());
    const admitted = admitReview(text, new DrainHookInjection({ config, random: (n: number) => randomBytes(n) }));
    // An input error names the input, as inject's do (docs/cli-errors.md).
    if (!admitted.ok) throw new CliExit(USAGE_EXIT, `${STDIN_NAME}: ${admitted.error.message} (the webhook would answer HTTP ${admitted.error.status})`);
    const { answer } = admitted.value;
    process.stdout.write(`${JSON.stringify(encodeReview(answer), null, 2)}\n`);
    if (!answer.allowed) throw new CliExit(1, `${who}: denied: ${answer.status?.message ?? 'the webhook would deny this request'}`);
  });
}
