/**
 * Property test (fast-check): for arbitrary pods, annotation values and configs, injection
 * never throws, every patch the webhook would send applies cleanly to its input (fast-json-patch
 * applyPatch with validation), the result validates against the Kubernetes Pod schema with the
 * sleep inside the grace period, and a second pass changes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import type { InjectConfig } from '../../src/config/webhook.js';
import { HOOK_KINDS } from '../../src/contract.js';
import { injectPod, seededRandom } from '../../src/inject/index.js';
import { DrainHookInjection } from '../../webhook/admission/drain-hook.js';
import { resultOf } from '../../webhook/admission/answer.js';
import { handleAdmission } from '../../webhook/admission/handler.js';
import { encodeReview } from '../../webhook/http/review.js';
import { assertSleepWithinGrace, validateKubernetesObject } from './schema.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 400);

// Mostly plausible values (so most runs inject), with every kind of bad value mixed in.
const goodDurations = fc.oneof(
  fc.constantFrom('true', '30s', '1m30s', '2m', '45', '500ms', '1.5s', ' 10s '),
  fc.integer({ min: 1, max: 600 }).map(String),
  fc.tuple(fc.integer({ min: 1, max: 90 }), fc.constantFrom('s', 'm', 'ms')).map(([n, u]) => `${n}${u}`),
);
const badDurations = fc.oneof(
  fc.constantFrom('abc', '0', '0s', '-5s', '1h', '2h', '', 'false', '1d', '1e3', '99999999999999999999'),
  fc.string({ maxLength: 8 }),
);
const durations = fc.oneof({ arbitrary: goodDurations, weight: 20 }, { arbitrary: badDurations, weight: 1 });
const names = fc.constantFrom('app', 'proxy', 'cache', 'log-shipper', 'db');
const hookValues = fc.oneof({ arbitrary: fc.constantFrom(...HOOK_KINDS), weight: 12 }, { arbitrary: fc.string({ maxLength: 6 }), weight: 1 });
const containerLists = fc.oneof(
  { arbitrary: fc.constantFrom('app', 'app,proxy', ' app '), weight: 6 },
  { arbitrary: fc.uniqueArray(names, { minLength: 0, maxLength: 3 }).map((n) => n.join(',')), weight: 2 },
  { arbitrary: fc.string({ maxLength: 10 }), weight: 1 },
);

const annotations = fc.record({
  'conndrain.io/drain': durations,
  'conndrain.io/min-drain': fc.oneof({ arbitrary: fc.constantFrom('0', '1s', '500ms', '5'), weight: 8 }, { arbitrary: durations, weight: 1 }),
  'conndrain.io/shutdown-grace': durations,
  'conndrain.io/containers': containerLists,
  'conndrain.io/hook': hookValues,
  'conndrain.io/drain-id': fc.oneof(fc.constant('0123456789abcdef0123456789abcdef'), fc.string({ maxLength: 8 })),
  'team.example/owner': fc.string({ maxLength: 10 }),
}, { requiredKeys: ['conndrain.io/drain'] });

const preStops = fc.constantFrom(
  { exec: { command: ['/bin/stop'] } },
  { sleep: { seconds: 3 } },
  { httpGet: { path: '/quit', port: 8080 } },
  { exec: { command: ['/bin/sh', '-c', 'sleep 5'] } },
);
const lifecycles = fc.option(fc.record({ preStop: preStops, postStart: fc.constant({ exec: { command: ['/bin/warm'] } }) }, { requiredKeys: [] }), { nil: undefined, freq: 3 });

const containers = fc.uniqueArray(names, { minLength: 0, maxLength: 3 }).map((rest) => ['app', ...rest.filter((n) => n !== 'app')]).chain((list) =>
  fc.tuple(...list.map((name) => lifecycles.map((lifecycle) => ({ name, image: `registry.example/${name}:1`, ...(lifecycle ? { lifecycle } : {}) })))));

const pods = fc.record({
  metadata: fc.record({
    name: fc.option(fc.constantFrom('web-0', 'api'), { nil: undefined }),
    generateName: fc.constant('web-7d9f8b6c5d-'),
    namespace: fc.constant('shop'),
    labels: fc.option(fc.dictionary(fc.constantFrom('app', 'tier', 'conndrain.io/managed'), fc.constantFrom('web', 'true', 'x')), { nil: undefined }),
    annotations: fc.oneof({ arbitrary: annotations, weight: 12 }, { arbitrary: fc.constant(undefined), weight: 1 }),
  }, { requiredKeys: ['generateName', 'namespace', 'annotations'] }),
  spec: fc.record({
    containers,
    initContainers: fc.option(fc.constant([{ name: 'mesh', image: 'mesh:1', restartPolicy: 'Always' }, { name: 'migrate', image: 'migrate:1' }]), { nil: undefined }),
    terminationGracePeriodSeconds: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    hostNetwork: fc.oneof({ arbitrary: fc.constant(undefined), weight: 10 }, { arbitrary: fc.boolean(), weight: 1 }),
  }, { requiredKeys: ['containers'] }),
}).map((p) => JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...p })) as Record<string, unknown> & { spec: unknown }); // real input is parsed JSON

const configs: fc.Arbitrary<InjectConfig> = fc.record({
  defaultHook: fc.constantFrom(...HOOK_KINDS),
  agentPort: fc.integer({ min: 1, max: 65535 }),
  defaultDrainMs: fc.integer({ min: 1000, max: 120_000 }),
  maxDurationMs: fc.integer({ min: 120_000, max: 7_200_000 }),
  onInvalid: fc.constantFrom('deny' as const, 'allow' as const),
  onExistingPreStop: fc.constantFrom('skip' as const, 'replace' as const),
});

const request = (object: unknown) => ({ uid: 'prop', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object });

test('injection: never throws, patches apply cleanly, results validate, second pass changes nothing', () => {
  let injected = 0;
  const reasons = new Map<string, number>();
  fc.assert(fc.property(pods, configs, fc.integer(), (pod, config, seed) => {
    const input = structuredClone(pod);
    const answer = handleAdmission(new DrainHookInjection({ config, random: seededRandom(seed) }), request(input));
    const { response } = encodeReview(answer);
    assert.deepEqual(input, pod, 'input untouched');
    assert.notEqual(resultOf(answer), 'error', JSON.stringify(response));
    reasons.set(answer.reason, (reasons.get(answer.reason) ?? 0) + 1);
    const direct = injectPod(pod, config, seededRandom(seed));
    if (response.patch === undefined) {
      assert.equal(direct.changed, false);
      return;
    }
    injected++;
    const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as fastJsonPatch.Operation[];
    // validateOperation=true: every op must be well-formed and apply to this exact document.
    const patched = fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
    assert.deepEqual(patched, direct.pod, 'the patch produces exactly the injected pod');
    validateKubernetesObject('Pod', patched);
    assertSleepWithinGrace(patched.spec as never);
    const again = injectPod(patched, config, seededRandom(seed + 1));
    assert.equal(again.changed, false, `second pass changed: ${JSON.stringify(again.warnings)}`);
    assert.equal(again.reason, 'already-injected');
  }), { numRuns: RUNS });
  assert.ok(injected > RUNS / 8, `only ${injected} of ${RUNS} runs injected: the generator is too narrow`);
  console.log(`property: ${injected} of ${RUNS} runs injected; reasons ${JSON.stringify(Object.fromEntries(reasons))}`);
});

test('injection: arbitrary JSON never throws and never reports an internal error', () => {
  fc.assert(fc.property(fc.anything(), (value) => {
    const result = injectPod(value, { defaultHook: 'sleep', agentPort: 9901, defaultDrainMs: 30_000, maxDurationMs: 3_600_000, onInvalid: 'deny', onExistingPreStop: 'skip' }, seededRandom(1));
    assert.notEqual(result.reason, 'internal-error', JSON.stringify(result.warnings));
  }), { numRuns: RUNS });
});
