import type { Command } from 'commander';
import { WEBHOOK_OPTIONS, type TlsModeConfig, type WebhookConfig } from '../../src/config/webhook.js';
import type { Logger } from '../../log/logger.js';
import type { MetricsAccess } from '../../kube/metrics-auth/metrics-access.js';
import { CliExit } from '../exit.js';
import { addConfigOptions } from '../options.js';
import { loadWebhookCliConfig } from '../webhook/input.js';

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

/**
 * --metrics-secure (the default): scrapes of /metrics are reviewed by the API server, reached
 * with --kubeconfig or the in-cluster service account. A connection that cannot be set up
 * stops the start: metrics open to anyone by accident would be worse than a failed rollout.
 */
async function prepareMetricsAccess(config: WebhookConfig, logger: Logger): Promise<MetricsAccess | undefined> {
  if (config.metrics?.secure !== true) return undefined;
  const [{ loadKubeConnection }, { MetricsAccess: Access }] = await Promise.all([import('../../kube/load.js'), import('../../kube/metrics-auth/metrics-access.js')]);
  try {
    const kube = await loadKubeConnection({ kubeconfig: config.metrics.kubeconfig, serviceHost: process.env.KUBERNETES_SERVICE_HOST, servicePort: process.env.KUBERNETES_SERVICE_PORT });
    return new Access({ kube, logger: logger.child({ part: 'metrics-access' }) });
  } catch (error) {
    logger.error({ err: error }, '--metrics-secure: cannot reach the API server to review scrapes');
    logger.flush();
    throw new CliExit(1, `conndrain webhook: --metrics-secure needs the API server (--kubeconfig or in-cluster): ${(error as Error).message}; --metrics-secure=false serves /metrics to anyone`);
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
    const { batchedDestination, createLogger } = await import('../../log/logger.js');
    const logger = createLogger({ level: config.logLevel, component: 'webhook', destination: batchedDestination() });
    if (config.tls?.mode === 'self-signed') await prepareSelfSigned(config, config.tls, logger);
    // Loaded here, not at import: every other conndrain command starts without Express.
    const { startWebhookServer } = await import('../../webhook/server.js');
    const metricsAccess = await prepareMetricsAccess(config, logger);
    const running = await startWebhookServer({ config, logger, metricsAccess });
    if (running.firstLoad !== 'loaded') logger.error({ certDir: config.certDir, result: running.firstLoad }, 'no valid certificate yet: /readyz answers 503 until one appears');
    const signal = await waitForSignal();
    logger.info({ signal, shutdownDelayMs: config.shutdownDelayMs, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'stopping: /readyz 503, serving through the delay, then finishing in-flight requests');
    await running.close();
    throw new CliExit(0);
  });
}
