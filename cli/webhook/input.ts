/**
 * What `conndrain inject`, `review` and `webhook` share: the webhook's configuration from flags
 * and environment (src/config/webhook.ts).
 */
import { loadWebhookConfig, WEBHOOK_OPTIONS, type WebhookConfig } from '../../src/config/webhook.js';
import { CliExit } from '../exit.js';

/** The options `inject` and `review` share with the webhook: the injection part of its config. */
export const INJECT_OPTIONS = {
  defaultHook: WEBHOOK_OPTIONS.defaultHook,
  agentPort: WEBHOOK_OPTIONS.agentPort,
  defaultDrain: WEBHOOK_OPTIONS.defaultDrain,
  maxDuration: WEBHOOK_OPTIONS.maxDuration,
  onInvalid: WEBHOOK_OPTIONS.onInvalid,
  onExistingPreStop: WEBHOOK_OPTIONS.onExistingPreStop,
};

export function loadWebhookCliConfig(flags: Record<string, unknown>): WebhookConfig {
  // A command action (an entry point): the environment is read here and parsed by the config layer.
  const env = process.env;
  const loaded = loadWebhookConfig({ flags, env });
  if (!loaded.ok) throw new CliExit(2, `conndrain: invalid configuration:\n  ${loaded.error.join('\n  ')}`);
  return loaded.value;
}
