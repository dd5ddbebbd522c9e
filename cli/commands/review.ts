import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { INJECT_OPTIONS, loadWebhookCliConfig, readInput } from '../webhook-input.js';

/** `conndrain review`: the AdmissionReview response the webhook would send (webhook/admission/answer.ts). */
export function defineReviewCommand(review: Command): void {
  addConfigOptions(review, INJECT_OPTIONS);
  review.addHelpText('after', `
Example:
  $ conndrain review < admission-review.json | jq -r .response.patch | base64 -d | jq .

A request the webhook would refuse before admission (not JSON, not a v1 AdmissionReview,
no request.uid) prints the Status it would answer with and exits 1.`);
  review.action(async (flags: Record<string, unknown>) => {
    const config = loadWebhookCliConfig(flags);
    const { answerReview } = await import('../../webhook/admission/answer.js');
    const { DrainHookInjection } = await import('../../webhook/admission/drain-hook.js');
    const answer = answerReview(await readInput('-'), new DrainHookInjection({ config, random: (n: number) => randomBytes(n) }));
    process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
    if (answer.status !== 200) throw new CliExit(1, `conndrain review: HTTP ${answer.status}: ${(answer.body as { message: string }).message}`);
  });
}
