import type { Command } from 'commander';
import { WEBHOOK_OPTIONS, type TlsModeConfig, type WebhookConfig } from '../../src/config/webhook.js';
import type { Logger } from '../../src/logging.js';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { loadWebhookCliConfig } from '../webhook-input.js';

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/** --tls-mode=self-signed: the Secret, the files in --cert-dir and the caBundle, before listening. */
async function prepareSelfSigned(config: WebhookConfig, tls: TlsModeConfig, logger: Logger): Promise<void> {
  const { bootstrapSelfSigned } = await import('../../webhook/tls/self-signed.js');
  try {
    await bootstrapSelfSigned({
      kubeconfig: tls.kubeconfig,
      namespace: tls.namespace,
      secretName: tls.secret,
      webhookConfigurationName: tls.webhookConfiguration,
      serviceName: tls.serviceName,
      certDir: config.certDir,
      validityDays: tls.validityMs / 86_400_000,
      logger: logger.child({ part: 'self-signed' }),
    });
  } catch (error) {
    logger.error({ err: error }, 'self-signed mode: could not prepare the serving certificate');
    logger.flush();
    throw new CliExit(1, `conndrain webhook: self-signed mode: ${(error as Error).message}`);
  }
}

/** `conndrain webhook`: the admission webhook server (webhook/server.ts), until SIGTERM/SIGINT. */
export function defineWebhookCommand(webhook: Command): void {
  addConfigOptions(webhook, WEBHOOK_OPTIONS);
  webhook.addHelpText('after', `
Example:
  $ conndrain webhook --cert-dir /etc/conndrain/tls --port 9443 --default-hook agent

Every flag can also come from its environment variable (shown above); flags win.`);
  webhook.action(async (flags: Record<string, unknown>) => {
    const config = loadWebhookCliConfig(flags);
    const { batchedDestination, createLogger } = await import('../../src/logging.js');
    const logger = createLogger({ level: config.logLevel, component: 'webhook', destination: batchedDestination() });
    if (config.tls?.mode === 'self-signed') await prepareSelfSigned(config, config.tls, logger);
    // Loaded here, not at import: every other conndrain command starts without Express.
    const { startWebhookServer } = await import('../../webhook/server.js');
    const running = await startWebhookServer({ config, logger });
    if (running.firstLoad !== 'loaded') logger.error({ certDir: config.certDir, result: running.firstLoad }, 'no valid certificate yet: /readyz answers 503 until one appears');
    const signal = await waitForSignal();
    logger.info({ signal, shutdownDelayMs: config.shutdownDelayMs, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'stopping: /readyz 503, serving through the delay, then finishing in-flight requests');
    await running.close();
    throw new CliExit(0);
  });
}
