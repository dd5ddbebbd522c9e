import { HOOK_KINDS } from '../contract.js';
import { fail, ok, type Result } from '../result.js';
import { parseConfig, type ConfigOf } from './config-of.js';
import { METRICS_SECURE_OPTION } from './metrics.js';
import type { ConfigSources, OptionSpec } from './options.js';

/** Every flag of `conndrain webhook` (and of `inject`/`review`, which share the injection part). */
export const WEBHOOK_OPTIONS = {
  address: { kind: 'string', flag: 'address', env: 'CONNDRAIN_WEBHOOK_ADDRESS', default: '0.0.0.0', description: 'address the HTTPS server listens on' },
  port: { kind: 'int', flag: 'port', env: 'CONNDRAIN_WEBHOOK_PORT', default: 9443, min: 1, max: 65535, description: 'HTTPS port for /mutate, /healthz, /readyz and /metrics' },
  certDir: { kind: 'string', flag: 'cert-dir', env: 'CONNDRAIN_CERT_DIR', default: '/etc/conndrain/tls', description: 'directory holding tls.crt and tls.key (the mounted cert-manager Secret)' },
  tlsMode: { kind: 'enum', flag: 'tls-mode', env: 'CONNDRAIN_TLS_MODE', default: 'files', values: ['files', 'self-signed'], description: 'files: serve the pair mounted in --cert-dir (cert-manager); self-signed: create or read a CA and serving pair in the Secret --tls-secret, write it to --cert-dir and set the caBundle of --webhook-configuration' },
  tlsSecret: { kind: 'string', flag: 'tls-secret', env: 'CONNDRAIN_TLS_SECRET', default: 'conndrain-webhook-tls', description: 'self-signed mode: the Secret (in --namespace) holding the CA and serving pair' },
  webhookConfiguration: { kind: 'string', flag: 'webhook-configuration', env: 'CONNDRAIN_WEBHOOK_CONFIGURATION', default: 'conndrain', description: 'self-signed mode: the MutatingWebhookConfiguration whose caBundle is set' },
  serviceName: { kind: 'string', flag: 'service-name', env: 'CONNDRAIN_SERVICE_NAME', default: 'conndrain-webhook', description: 'self-signed mode: the Service the API server calls (the certificate names it; webhooks calling it get the caBundle)' },
  namespace: { kind: 'string', flag: 'namespace', env: 'POD_NAMESPACE', default: 'conndrain-system', description: 'self-signed mode: namespace of the Secret and the Service' },
  certValidity: { kind: 'duration', flag: 'cert-validity', env: 'CONNDRAIN_CERT_VALIDITY', default: '8760h', minMs: 3_600_000, maxMs: 87_600 * 3_600_000, description: 'self-signed mode: validity of a newly generated CA and serving pair (an expired pair is replaced at the next start)' },
  kubeconfig: { kind: 'string', flag: 'kubeconfig', env: 'KUBECONFIG', default: '', description: 'kubeconfig file for the self-signed mode and the /metrics access reviews; in-cluster service account when empty' },
  certPollInterval: { kind: 'duration', flag: 'cert-poll-interval', env: 'CONNDRAIN_CERT_POLL_INTERVAL', default: '5s', minMs: 100, maxMs: 600_000, description: 'how often the certificate files are compared for rotation' },
  defaultHook: { kind: 'enum', flag: 'default-hook', env: 'CONNDRAIN_DEFAULT_HOOK', default: 'sleep', values: HOOK_KINDS, description: 'hook kind for pods that do not set conndrain.io/hook' },
  agentPort: { kind: 'int', flag: 'agent-port', env: 'CONNDRAIN_AGENT_PORT', default: 9901, min: 1, max: 65535, description: 'port of the node agent drain API that hooks of kind agent call on 127.0.0.1' },
  defaultDrain: { kind: 'duration', flag: 'default-drain', env: 'CONNDRAIN_DEFAULT_DRAIN', default: '30s', minMs: 1000, maxMs: 86_400_000, description: 'drain used when conndrain.io/drain is "true"' },
  maxDuration: { kind: 'duration', flag: 'max-duration', env: 'CONNDRAIN_MAX_DURATION', default: '1h', minMs: 1000, maxMs: 86_400_000, description: 'upper bound for every duration annotation' },
  onInvalid: { kind: 'enum', flag: 'on-invalid', env: 'CONNDRAIN_ON_INVALID', default: 'deny', values: ['deny', 'allow'], description: 'deny a pod with invalid annotations, or allow it unchanged with a warning' },
  onExistingPreStop: { kind: 'enum', flag: 'on-existing-prestop', env: 'CONNDRAIN_ON_EXISTING_PRESTOP', default: 'skip', values: ['skip', 'replace'], description: 'what to do with a container that already has a preStop hook' },
  shutdownDelay: { kind: 'duration', flag: 'shutdown-delay', env: 'CONNDRAIN_SHUTDOWN_DELAY', default: '5s', minMs: 0, maxMs: 600_000, description: 'on SIGTERM, how long to keep serving (with /readyz 503) while the endpoint removal reaches the API servers' },
  shutdownTimeout: { kind: 'duration', flag: 'shutdown-timeout', env: 'CONNDRAIN_SHUTDOWN_TIMEOUT', default: '20s', minMs: 0, maxMs: 600_000, description: 'after --shutdown-delay, how long in-flight requests may take before every remaining connection is closed and the process exits' },
  maxConnections: { kind: 'int', flag: 'max-connections', env: 'CONNDRAIN_MAX_CONNECTIONS', default: 256, min: 1, max: 65_535, description: 'open TCP connections per replica; more are closed at once (docs/webhook-operations.md: 256 x ~43 KiB each, far inside the memory limit)' },
  metricsSecure: METRICS_SECURE_OPTION,
  logLevel: { kind: 'enum', flag: 'log-level', env: 'CONNDRAIN_LOG_LEVEL', default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], description: 'pino log level' },
} as const satisfies Record<string, OptionSpec>;

/** The options of the self-signed TLS mode, gathered in `WebhookConfig.tls`. */
type TlsModeOption = 'tlsMode' | 'tlsSecret' | 'webhookConfiguration' | 'serviceName' | 'namespace' | 'certValidityMs' | 'kubeconfig';

/**
 * `conndrain webhook`'s config: one field per option of WEBHOOK_OPTIONS (durations in ms, as
 * `<name>Ms`), the TLS mode's options gathered in `tls` (absent in programs that build a config
 * by hand, tests and bench: files mode).
 */
export type WebhookConfig = Omit<ConfigOf<typeof WEBHOOK_OPTIONS>, TlsModeOption | 'metricsSecure'> & { tls?: TlsModeConfig; metrics?: WebhookMetricsConfig };

/**
 * How /metrics is guarded (`--metrics-secure`) and how the API server that reviews the scrapes
 * is reached. Absent in programs that build a config by hand (tests, bench): open metrics.
 */
export interface WebhookMetricsConfig {
  secure: boolean;
  kubeconfig: string;
}

/** The part of the webhook config that injection needs (also used by `inject` and `review`). */
export type InjectConfig = Pick<WebhookConfig, 'defaultHook' | 'agentPort' | 'defaultDrainMs' | 'maxDurationMs' | 'onInvalid' | 'onExistingPreStop'>;

/** Where the serving pair comes from (`--tls-mode` and the self-signed mode's inputs). */
export interface TlsModeConfig {
  mode: 'files' | 'self-signed';
  secret: string;
  webhookConfiguration: string;
  serviceName: string;
  namespace: string;
  validityMs: number;
  kubeconfig: string;
}

export const DEFAULT_INJECT_CONFIG: InjectConfig = {
  defaultHook: 'sleep',
  agentPort: 9901,
  defaultDrainMs: 30_000,
  maxDurationMs: 3_600_000,
  onInvalid: 'deny',
  onExistingPreStop: 'skip',
};

export function loadWebhookConfig(sources: ConfigSources): Result<WebhookConfig, string[]> {
  const parsed = parseConfig(WEBHOOK_OPTIONS, sources);
  if (!parsed.ok) return parsed;
  const { tlsMode, tlsSecret, webhookConfiguration, serviceName, namespace, certValidityMs, kubeconfig, metricsSecure, ...rest } = parsed.value;
  const config: WebhookConfig = {
    ...rest,
    tls: { mode: tlsMode, secret: tlsSecret, webhookConfiguration, serviceName, namespace, validityMs: certValidityMs, kubeconfig },
    metrics: { secure: metricsSecure, kubeconfig },
  };
  if (config.defaultDrainMs > config.maxDurationMs) {
    return fail([`--default-drain (${config.defaultDrainMs} ms) is above --max-duration (${config.maxDurationMs} ms)`]);
  }
  return ok(config);
}
