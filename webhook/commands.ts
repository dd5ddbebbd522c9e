import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { addConfigOptions } from '../cli/options.js';
import { CliExit } from '../cli/exit.js';
import { loadWebhookConfig, WEBHOOK_OPTIONS, type TlsModeConfig, type WebhookConfig } from '../src/config/webhook.js';
import { batchedDestination, createLogger, type Logger } from '../src/logging.js';
import { answerReview } from './admission/answer.js';
import { DrainHookInjection } from './admission/drain-hook.js';
import { injectManifests, ManifestError } from './cli/inject-manifests.js';

/** The options `inject` and `review` share with the webhook: the injection part of its config. */
const INJECT_OPTIONS = {
  defaultHook: WEBHOOK_OPTIONS.defaultHook,
  agentPort: WEBHOOK_OPTIONS.agentPort,
  defaultDrain: WEBHOOK_OPTIONS.defaultDrain,
  maxDuration: WEBHOOK_OPTIONS.maxDuration,
  onInvalid: WEBHOOK_OPTIONS.onInvalid,
  onExistingPreStop: WEBHOOK_OPTIONS.onExistingPreStop,
};

const random = (n: number): Uint8Array => randomBytes(n);

function loadConfig(flags: Record<string, unknown>): WebhookConfig {
  // This is a command action (an entry point): the environment is read here and parsed by the config layer.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const loaded = loadWebhookConfig({ flags, env });
  if (!loaded.ok) throw new CliExit(2, `conndrain: invalid configuration:\n  ${loaded.error.join('\n  ')}`);
  return loaded.value;
}

async function readInput(file: string): Promise<string> {
  if (file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw new CliExit(2, `conndrain: cannot read ${file}: ${(error as Error).message}`);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

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
  const { bootstrapSelfSigned } = await import('./tls/self-signed.js');
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

export function registerWebhookCommands(program: Command): void {
  const inject = program
    .command('inject')
    .description('Rewrite Kubernetes manifests the way the webhook would mutate them: Pods get the preStop drain hook and grace period, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs get it in their pod template; other kinds pass through untouched. YAML (multi-document) or JSON; the result goes to stdout, warnings to stderr.')
    .option('-f, --filename <file>', 'manifest file to read, or - for stdin', '-');
  addConfigOptions(inject, INJECT_OPTIONS);
  inject.addHelpText('after', `
Examples:
  $ conndrain inject -f deployment.yaml | kubectl apply -f -
  $ kubectl get deploy web -o yaml | conndrain inject --default-hook agent

Exit status: 0 when every resource was rewritten or left alone on purpose, 1 when a resource has
invalid conndrain.io annotations (it is written unchanged; the reason goes to stderr), 2 when
the input cannot be read or parsed (nothing is written).`);
  inject.action(async (flags: Record<string, unknown>) => {
    const config = loadConfig(flags);
    const text = await readInput(typeof flags['filename'] === 'string' ? flags['filename'] : '-');
    let result;
    try {
      result = injectManifests(text, config, random);
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

  const review = program
    .command('review')
    .description('Read an admission.k8s.io/v1 AdmissionReview (JSON) on stdin and print the AdmissionReview response the webhook would send, patch included (base64 JSONPatch).');
  addConfigOptions(review, INJECT_OPTIONS);
  review.addHelpText('after', `
Example:
  $ conndrain review < admission-review.json | jq -r .response.patch | base64 -d | jq .

A request the webhook would refuse before admission (not JSON, not a v1 AdmissionReview,
no request.uid) prints the Status it would answer with and exits 1.`);
  review.action(async (flags: Record<string, unknown>) => {
    const config = loadConfig(flags);
    const answer = answerReview(await readInput('-'), new DrainHookInjection({ config, random }));
    process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
    if (answer.status !== 200) throw new CliExit(1, `conndrain review: HTTP ${answer.status}: ${(answer.body as { message: string }).message}`);
  });

  const webhook = program
    .command('webhook')
    .description('Serve the mutating admission webhook over HTTPS: POST /mutate (admission.k8s.io/v1), GET /healthz, /readyz and /metrics. The certificate pair is read from --cert-dir (tls.crt, tls.key) and reloaded when it rotates. SIGTERM stops accepting, finishes in-flight requests and exits.');
  addConfigOptions(webhook, WEBHOOK_OPTIONS);
  webhook.addHelpText('after', `
Example:
  $ conndrain webhook --cert-dir /etc/conndrain/tls --port 9443 --default-hook agent

Every flag can also come from its environment variable (shown above); flags win.`);
  webhook.action(async (flags: Record<string, unknown>) => {
    const config = loadConfig(flags);
    const logger = createLogger({ level: config.logLevel, component: 'webhook', destination: batchedDestination() });
    if (config.tls?.mode === 'self-signed') await prepareSelfSigned(config, config.tls, logger);
    // Loaded here, not at import: every other conndrain command starts without Express.
    const { startWebhookServer } = await import('./server.js');
    const running = await startWebhookServer({ config, logger });
    if (running.firstLoad !== 'loaded') logger.error({ certDir: config.certDir, result: running.firstLoad }, 'no valid certificate yet: /readyz answers 503 until one appears');
    const signal = await waitForSignal();
    logger.info({ signal, shutdownDelayMs: config.shutdownDelayMs, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'stopping: /readyz 503, serving through the delay, then finishing in-flight requests');
    await running.close();
    throw new CliExit(0);
  });
}
