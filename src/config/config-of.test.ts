/**
 * The config types are derived from the option specs (ConfigOf): these checks fail to compile
 * when a field and its spec disagree (a duration's field is `<name>Ms: number`, an optional
 * string may be unset, an enum is exactly its values, and the names other modules give those
 * values are the specs' values), and the runtime tests fail when the loader's object is not
 * what the type says.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOOK_KINDS } from '../contract.js';
import type { FlowVisibilityMode } from '../flow-visibility.js';
import type { FwmarkRange } from '../flowpin/fwmark-range.js';
import { AGENT_OPTIONS, loadAgentCleanupConfig, loadAgentConfig, type AgentConfig } from './agent.js';
import { configKey, parseConfig, type ConfigOf } from './config-of.js';
import type { OptionSpec } from './options.js';
import { DEFAULT_INJECT_CONFIG, loadWebhookConfig, WEBHOOK_OPTIONS, type InjectConfig, type WebhookConfig } from './webhook.js';

/** true exactly when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only with `true`: a compile-time assertion. */
function expectTrue<T extends true>(): T | undefined {
  return undefined;
}

const SAMPLE = {
  optional: { kind: 'string', flag: 'optional', env: 'X_OPTIONAL', description: 'unset unless given' },
  withDefault: { kind: 'string', flag: 'with-default', env: 'X_WITH_DEFAULT', default: 'd', description: 'a default' },
  required: { kind: 'string', flag: 'required', env: 'X_REQUIRED', required: true, description: 'must be given' },
  count: { kind: 'int', flag: 'count', env: 'X_COUNT', default: 3, min: 1, max: 9, description: 'a number' },
  wait: { kind: 'duration', flag: 'wait', env: 'X_WAIT', default: '2s', minMs: 0, maxMs: 60_000, description: 'a duration' },
  on: { kind: 'bool', flag: 'on', env: 'X_ON', default: false, description: 'a switch' },
  mode: { kind: 'enum', flag: 'mode', env: 'X_MODE', default: 'a', values: ['a', 'b'], description: 'one of' },
} as const satisfies Record<string, OptionSpec>;

describe('config types derived from the option specs (compile-time checks)', () => {
  it('map each kind to its field', () => {
    expectTrue<Equal<ConfigOf<typeof SAMPLE>, { optional: string | undefined; withDefault: string; required: string; count: number; waitMs: number; on: boolean; mode: 'a' | 'b' }>>();
  });

  it('give the agent one field per option, under the names its modules use', () => {
    expectTrue<Equal<AgentConfig['holdIntervalMs'], number>>();
    expectTrue<Equal<AgentConfig['drainPort'], number>>();
    expectTrue<Equal<AgentConfig['nodeName'], string>>();
    expectTrue<Equal<AgentConfig['kubeconfig'], string | undefined>>();
    expectTrue<Equal<AgentConfig['ipvsHold'], boolean>>();
    expectTrue<Equal<AgentConfig['flowVisibility'], FlowVisibilityMode>>();
    expectTrue<Equal<AgentConfig['fwmarkRange'], FwmarkRange>>();
    expectTrue<Equal<Exclude<keyof AgentConfig, 'fwmarkRange'>, Exclude<keyof ConfigOf<typeof AGENT_OPTIONS>, 'fwmarkRange'>>>();
    // @ts-expect-error a duration's field carries its unit: holdIntervalMs, not holdInterval
    expectTrue<Equal<AgentConfig['holdInterval'], number>>();
  });

  it('give the webhook one field per option, and injection the hook kinds of the contract', () => {
    expectTrue<Equal<WebhookConfig['defaultHook'], (typeof HOOK_KINDS)[number]>>();
    expectTrue<Equal<WebhookConfig['certPollIntervalMs'], number>>();
    expectTrue<Equal<InjectConfig['onInvalid'], 'deny' | 'allow'>>();
    expectTrue<Equal<InjectConfig['onExistingPreStop'], 'skip' | 'replace'>>();
    // The self-signed TLS mode's options are gathered in `tls`, --metrics-secure in `metrics`; every other option is a field.
    expectTrue<Equal<Exclude<keyof WebhookConfig, 'tls' | 'metrics'>, Exclude<keyof ConfigOf<typeof WEBHOOK_OPTIONS>, 'tlsMode' | 'tlsSecret' | 'webhookConfiguration' | 'serviceName' | 'namespace' | 'certValidityMs' | 'kubeconfig' | 'metricsSecure'>>>();
  });
});

/** The runtime type ConfigValue promises for a spec's kind. */
function runtimeTypesOf(spec: OptionSpec): string[] {
  switch (spec.kind) {
    case 'string': return spec.required === true || spec.default !== undefined ? ['string'] : ['string', 'undefined'];
    case 'int':
    case 'duration': return ['number'];
    case 'bool': return ['boolean'];
    case 'enum': return ['string'];
  }
}

/** Every field of `config` is what its spec's ConfigValue says, and there is no other field. */
function assertMatchesSpecs(config: object, specs: Readonly<Record<string, OptionSpec>>, except: readonly string[] = []): void {
  const fields = Object.entries(specs).filter(([key]) => !except.includes(key)).map(([key, spec]) => [configKey(key, spec), spec] as const);
  assert.deepEqual(Object.keys(config).filter((k) => !except.includes(k)).sort(), fields.map(([field]) => field).sort());
  for (const [field, spec] of fields) {
    const value: unknown = (config as Record<string, unknown>)[field];
    assert.ok(runtimeTypesOf(spec).includes(typeof value), `${field}: ${typeof value}`);
    if (spec.kind === 'enum') assert.ok(spec.values.includes(String(value)), `${field}: ${String(value)}`);
  }
}

describe('parseConfig and the loaders (the runtime side of the derived types)', () => {
  it('names each value by its field, a duration in milliseconds', () => {
    const loaded = parseConfig(SAMPLE, { flags: { required: 'r', wait: '1500ms' }, env: { X_MODE: 'b' } });
    assert.deepEqual(loaded, { ok: true, value: { optional: undefined, withDefault: 'd', required: 'r', count: 3, waitMs: 1500, on: false, mode: 'b' } });
    const missing = parseConfig(SAMPLE, { flags: {}, env: {} });
    assert.equal(missing.ok, false);
  });

  it('load the agent config with one field per AGENT_OPTIONS entry', () => {
    const loaded = loadAgentConfig({ flags: { nodeName: 'node-1', holdInterval: '250ms' }, env: { KUBECONFIG: '/k' } });
    assert.ok(loaded.ok);
    assertMatchesSpecs(loaded.value, AGENT_OPTIONS, ['fwmarkRange']);
    assert.equal(loaded.value.holdIntervalMs, 250);
    assert.equal(loaded.value.kubeconfig, '/k');
    assert.equal(typeof loaded.value.fwmarkRange, 'object');
    const cleanup = loadAgentCleanupConfig({ flags: { cleanup: true }, env: {} });
    assert.ok(cleanup.ok);
    assert.deepEqual(Object.keys(cleanup.value).sort(), ['cleanup', 'fwmarkRange', 'logLevel']);
  });

  it('load the webhook config with one field per WEBHOOK_OPTIONS entry, whose defaults are DEFAULT_INJECT_CONFIG', () => {
    const loaded = loadWebhookConfig({ flags: {}, env: {} });
    assert.ok(loaded.ok);
    const { tls, metrics, ...fields } = loaded.value;
    assert.ok(tls !== undefined && metrics !== undefined);
    assertMatchesSpecs({ ...fields, metricsSecure: metrics.secure, tlsMode: tls.mode, tlsSecret: tls.secret, webhookConfiguration: tls.webhookConfiguration, serviceName: tls.serviceName, namespace: tls.namespace, certValidityMs: tls.validityMs, kubeconfig: tls.kubeconfig }, WEBHOOK_OPTIONS);
    const { defaultHook, agentPort, defaultDrainMs, maxDurationMs, onInvalid, onExistingPreStop } = loaded.value;
    assert.deepEqual({ defaultHook, agentPort, defaultDrainMs, maxDurationMs, onInvalid, onExistingPreStop }, DEFAULT_INJECT_CONFIG);
  });
});
