import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INJECT_CONFIG } from '../config/webhook.js';
import { injectPod, injectWorkload, isDrainId, newDrainId, parseInjectedRecord, seededRandom, type JsonObject } from './index.js';

const pod = (annotations: Record<string, string>, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { generateName: 'web-', annotations },
  spec: { containers: [{ name: 'app', image: 'app:1' }], ...extra },
});

test('drain ids come from the injected random source: 128 bits, hex, reproducible', () => {
  const a = newDrainId(seededRandom(1));
  assert.ok(isDrainId(a), a);
  assert.equal(a, newDrainId(seededRandom(1)));
  assert.notEqual(a, newDrainId(seededRandom(2)));
  assert.equal(newDrainId(() => new Uint8Array(16).fill(0xab)), 'ab'.repeat(16));
  const calls: number[] = [];
  injectPod(pod({ 'conndrain.io/drain': '30s' }), DEFAULT_INJECT_CONFIG, (n) => { calls.push(n); return new Uint8Array(n); });
  assert.deepEqual(calls, [16]);
});

test('the input is never modified; the output is a copy', () => {
  const input = pod({ 'conndrain.io/drain': '30s' });
  const before = structuredClone(input);
  const result = injectPod(input, DEFAULT_INJECT_CONFIG, seededRandom(3));
  assert.equal(result.changed, true);
  assert.deepEqual(input, before);
  assert.notEqual(result.pod, input);
});

test('the injected record says what was done', () => {
  const result = injectPod(pod({ 'conndrain.io/drain': '45s', 'conndrain.io/hook': 'exec' }, { terminationGracePeriodSeconds: 10 }), DEFAULT_INJECT_CONFIG, seededRandom(3));
  const annotations = (result.pod as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
  assert.deepEqual(parseInjectedRecord(annotations['conndrain.io/injected']), { hook: 'exec', containers: ['app'], drainSeconds: 45, terminationGracePeriodSeconds: 55 });
  assert.equal(result.hook, 'exec');
  assert.deepEqual(result.hooked, ['app']);
});

test('a sleep hook the pod keeps fits the grace period written (the API server refuses a sleep above it)', () => {
  // Found by the property test: drain 500ms + shutdown-grace 1.5s asks for 2 s, the kept hook sleeps 3 s.
  const input = pod({ 'conndrain.io/drain': '500ms', 'conndrain.io/shutdown-grace': '1.5s' }, {
    terminationGracePeriodSeconds: 0,
    containers: [{ name: 'app', image: 'app:1' }, { name: 'cache', image: 'cache:1', lifecycle: { preStop: { sleep: { seconds: 3 } } } }],
    initContainers: [{ name: 'mesh', image: 'mesh:1', restartPolicy: 'Always', lifecycle: { preStop: { sleep: { seconds: 4 } } } }],
  });
  const result = injectPod(input, { ...DEFAULT_INJECT_CONFIG, onExistingPreStop: 'skip' }, seededRandom(3));
  assert.equal(result.changed, true);
  assert.deepEqual(result.hooked, ['app']);
  assert.equal((result.pod as { spec: { terminationGracePeriodSeconds: number } }).spec.terminationGracePeriodSeconds, 4);
  const again = injectPod(result.pod, { ...DEFAULT_INJECT_CONFIG, onExistingPreStop: 'skip' }, seededRandom(4));
  assert.equal(again.changed, false);
});

test('garbage in never throws: each answer names why nothing was done', () => {
  const inputs: unknown[] = [null, 42, 'pod', [], {}, { metadata: 'x' }, { metadata: { annotations: { 'conndrain.io/drain': '30s' } } },
    { metadata: { annotations: { 'conndrain.io/drain': '30s' } }, spec: { containers: 'app' } },
    { metadata: { annotations: { 'conndrain.io/drain': '30s' } }, spec: { containers: [null, 7, { image: 'x' }] } }];
  for (const input of inputs) {
    const result = injectPod(input, DEFAULT_INJECT_CONFIG, seededRandom(1));
    assert.equal(result.changed, false, JSON.stringify(input));
    assert.notEqual(result.reason, 'internal-error', JSON.stringify(result));
    assert.ok(['not-a-pod', 'not-annotated', 'no-container-hooked'].includes(result.reason), `${JSON.stringify(input)} -> ${result.reason}`);
  }
});

test('workload templates get hooks but no drain-id; a second pass changes nothing', () => {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' }, annotations: { 'conndrain.io/drain': '30s', 'conndrain.io/hook': 'agent' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
  };
  const first = injectWorkload(deployment, 'Deployment', DEFAULT_INJECT_CONFIG);
  assert.equal(first.changed, true);
  const template = (first.object as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template;
  assert.equal(template.metadata.annotations['conndrain.io/drain-id'], undefined);
  assert.ok(first.warnings.some((w) => w.startsWith('conndrain: deployment/web: hook kind agent names each pod')), first.warnings.join('\n'));
  const second = injectWorkload(first.object, 'Deployment', DEFAULT_INJECT_CONFIG);
  assert.equal(second.changed, false);
  assert.equal(second.reason, 'already-injected');
});

test('a CronJob template sits under spec.jobTemplate.spec.template', () => {
  const cron = { kind: 'CronJob', metadata: { name: 'n' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { metadata: { annotations: { 'conndrain.io/drain': '5s' } }, spec: { containers: [{ name: 'j', image: 'j' }], restartPolicy: 'Never' } } } } } };
  const result = injectWorkload(cron, 'CronJob', DEFAULT_INJECT_CONFIG);
  assert.equal(result.changed, true);
  const spec = (result.object as { spec: { jobTemplate: { spec: { template: { spec: { containers: Array<{ lifecycle?: unknown }> } } } } } }).spec.jobTemplate.spec.template.spec;
  assert.deepEqual(spec.containers[0]?.lifecycle, { preStop: { sleep: { seconds: 5 } } });
  const missing = injectWorkload({ kind: 'Job', metadata: { name: 'x' } }, 'Job', DEFAULT_INJECT_CONFIG);
  assert.equal(missing.reason, 'no-pod-template');
});
