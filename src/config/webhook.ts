import { HOOK_KINDS } from '../contract.js';
import { fail, ok, type Result } from '../result.js';
import { parseConfig, type ConfigOf } from './config-of.js';
import type { ConfigSources, OptionSpec } from './options.js';

/** Every flag of `conndrain webhook` (and of `inject`/`review`, which share the injection part). */
export const WEBHOOK_OPTIONS = {
  address: { kind: 'string', flag: 'address', env: 'CONNDRAIN_WEBHOOK_ADDRESS', default: '0.0.0.0', description: 'address the HTTPS server listens on' },
  port: { kind: 'int', flag: 'port', env: 'CONNDRAIN_WEBHOOK_PORT', default: 9443, min: 1, max: 65535, description: 'HTTPS port for /mutate, /healthz, /readyz and /metrics' },
  certDir: { kind: 'string', flag: 'cert-dir', env: 'CONNDRAIN_CERT_DIR', default: '/etc/conndrain/tls', description: 'directory holding tls.crt and tls.key (the mounted cert-manager Secret)' },
  certPollInterval: { kind: 'duration', flag: 'cert-poll-interval', env: 'CONNDRAIN_CERT_POLL_INTERVAL', default: '5s', minMs: 100, maxMs: 600_000, description: 'how often the certificate files are compared for rotation' },
  defaultHook: { kind: 'enum', flag: 'default-hook', env: 'CONNDRAIN_DEFAULT_HOOK', default: 'sleep', values: HOOK_KINDS, description: 'hook kind for pods that do not set conndrain.io/hook' },
  agentPort: { kind: 'int', flag: 'agent-port', env: 'CONNDRAIN_AGENT_PORT', default: 9901, min: 1, max: 65535, description: 'port of the node agent drain API that hooks of kind agent call on 127.0.0.1' },
  defaultDrain: { kind: 'duration', flag: 'default-drain', env: 'CONNDRAIN_DEFAULT_DRAIN', default: '30s', minMs: 1000, maxMs: 86_400_000, description: 'drain used when conndrain.io/drain is "true"' },
  maxDuration: { kind: 'duration', flag: 'max-duration', env: 'CONNDRAIN_MAX_DURATION', default: '1h', minMs: 1000, maxMs: 86_400_000, description: 'upper bound for every duration annotation' },
  onInvalid: { kind: 'enum', flag: 'on-invalid', env: 'CONNDRAIN_ON_INVALID', default: 'deny', values: ['deny', 'allow'], description: 'deny a pod with invalid annotations, or allow it unchanged with a warning' },
  onExistingPreStop: { kind: 'enum', flag: 'on-existing-prestop', env: 'CONNDRAIN_ON_EXISTING_PRESTOP', default: 'skip', values: ['skip', 'replace'], description: 'what to do with a container that already has a preStop hook' },
  shutdownTimeout: { kind: 'duration', flag: 'shutdown-timeout', env: 'CONNDRAIN_SHUTDOWN_TIMEOUT', default: '20s', minMs: 0, maxMs: 600_000, description: 'on SIGTERM, how long in-flight requests may take before the process exits' },
  logLevel: { kind: 'enum', flag: 'log-level', env: 'CONNDRAIN_LOG_LEVEL', default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], description: 'pino log level' },
} as const satisfies Record<string, OptionSpec>;

/** `conndrain webhook`'s config: one field per option of WEBHOOK_OPTIONS (durations in ms, as `<name>Ms`). */
export type WebhookConfig = ConfigOf<typeof WEBHOOK_OPTIONS>;

/** The part of the webhook config that injection needs (also used by `inject` and `review`). */
export type InjectConfig = Pick<WebhookConfig, 'defaultHook' | 'agentPort' | 'defaultDrainMs' | 'maxDurationMs' | 'onInvalid' | 'onExistingPreStop'>;

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
  const config = parsed.value;
  if (config.defaultDrainMs > config.maxDurationMs) {
    return fail([`--default-drain (${config.defaultDrainMs} ms) is above --max-duration (${config.maxDurationMs} ms)`]);
  }
  return ok(config);
}
