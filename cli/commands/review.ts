import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { pathOf, USAGE_EXIT } from '../usage-error.js';
import { INJECT_OPTIONS, loadWebhookCliConfig } from '../webhook/input.js';

/** `conndrain review`: the AdmissionReview response the webhook would send (webhook/admission/answer.ts). */
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
    const [{ decodeManifest, readStdin, STDIN_NAME }, { answerReview }, { DrainHookInjection }] = await Promise.all([
      import('../manifest/input.js'),
      import('../../webhook/admission/answer.js'),
      import('../../webhook/admission/drain-hook.js'),
    ]);
    const text = decodeManifest(STDIN_NAME, await readStdin());
    const answer = answerReview(text, new DrainHookInjection({ config, random: (n: number) => randomBytes(n) }));
    // An input error names the input, as inject's do (docs/cli-errors.md).
    if (answer.request === undefined) throw new CliExit(USAGE_EXIT, `${STDIN_NAME}: ${answer.body.message} (the webhook would answer HTTP ${answer.status})`);
    process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
    const { response } = answer.body;
    if (!response.allowed) throw new CliExit(1, `${who}: denied: ${response.status?.message ?? 'the webhook would deny this request'}`);
  });
}
