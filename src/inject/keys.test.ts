import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INJECT_CONFIG } from '../config/webhook.js';
import { KNOWN_POD_ANNOTATIONS, USER_ANNOTATIONS } from '../contract.js';
import { checkKeys, closestKey, editDistance, injectPod, injectWorkload, seededRandom, type JsonObject } from './index.js';
import { MAX_KEY_PROBLEMS } from './keys.js';

const pod = (annotations: Record<string, string>, labels: Record<string, string> = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', labels, annotations },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});

test('edit distance counts a swap of neighbours as one edit', () => {
  assert.equal(editDistance('drian', 'drain'), 1);
  assert.equal(editDistance('hok', 'hook'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(editDistance('same', 'same'), 0);
  assert.equal(editDistance('kitten', 'sitting'), 3);
});

test('the closest known key of each misspelling is the one meant', () => {
  const cases: Array<[string, string]> = [
    ['conndrain.io/drian', 'conndrain.io/drain'],
    ['conndrain.io/hok', 'conndrain.io/hook'],
    ['conndrain.io/min-drian', 'conndrain.io/min-drain'],
    ['conndrain.io/mindrain', 'conndrain.io/min-drain'],
    ['conndrain.io/shutdown-grase', 'conndrain.io/shutdown-grace'],
    ['conndrain.io/container', 'conndrain.io/containers'],
    ['condrain.io/drain', 'conndrain.io/drain'],
    ['conndrain.io/drainid', 'conndrain.io/drain-id'],
  ];
  for (const [typo, meant] of cases) assert.equal(closestKey(typo)?.key, meant, typo);
});

test('known keys, the webhook\'s own included, and keys of other domains raise nothing', () => {
  const annotations = Object.fromEntries(KNOWN_POD_ANNOTATIONS.map((k) => [k, 'x']));
  assert.deepEqual(checkKeys({ annotations: { ...annotations, 'example.com/drain': '30s', 'prometheus.io/scrape': 'true' }, labels: { 'conndrain.io/managed': 'true', app: 'web' } }), []);
  assert.deepEqual(checkKeys(undefined), []);
  assert.deepEqual(checkKeys({ annotations: 'not a map' }), []);
});

test('an unknown key names the closest known one, or lists the keys read when none is close', () => {
  const [near] = checkKeys({ annotations: { 'conndrain.io/drian': '30s' } });
  assert.deepEqual(near, { code: 'unknown-annotation', key: 'conndrain.io/drian', suggestion: 'conndrain.io/drain', message: 'unknown annotation "conndrain.io/drian" is ignored; did you mean conndrain.io/drain?' });
  const [far] = checkKeys({ annotations: { 'conndrain.io/something-else': 'x' } });
  assert.equal(far?.suggestion, undefined);
  assert.equal(far?.message, `unknown annotation "conndrain.io/something-else" is ignored; conndrain reads ${USER_ANNOTATIONS.join(', ')}`);
});

test('an opt-in written as a label, a namespace or Service label on a pod, the retired flow-pinning annotation', () => {
  assert.deepEqual(checkKeys({ labels: { 'conndrain.io/drain': 'true' } }).map((p) => [p.code, p.suggestion]), [['annotation-as-label', 'conndrain.io/drain']]);
  assert.deepEqual(checkKeys({ labels: { 'conndrain.io/inject': 'enabled' } }).map((p) => p.code), ['wrong-object']);
  assert.deepEqual(checkKeys({ annotations: { 'conndrain.io/hold': 'disabled' } }).map((p) => p.message), ['conndrain.io/hold is a Service label; as a pod annotation it has no effect: label the Service instead']);
  const [retired] = checkKeys({ annotations: { 'conndrain.io/flow-pinning': 'off' } });
  assert.equal(retired?.code, 'retired-annotation');
  assert.match(retired?.message ?? '', /label the Service conndrain\.io\/flow-pinning=off instead/);
});

test('hostile keys are bounded: quoted, control characters escaped, at most a few problems per object', () => {
  const annotations = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`conndrain.io/x${i}\u0007`, 'v']));
  const problems = checkKeys({ annotations });
  assert.equal(problems.length, MAX_KEY_PROBLEMS);
  assert.match(problems[MAX_KEY_PROBLEMS - 1]?.message ?? '', /and 46 more/);
  assert.ok(problems.every((p) => !p.message.includes('\u0007')));
  assert.deepEqual(checkKeys({ annotations: { [`conndrain.io/${'z'.repeat(100_000)}`]: 'v' } }), [], 'longer than any key the API server accepts: not compared');
});

test('injection carries the key problems as data and leads its warnings with them, whatever the outcome', () => {
  const skipped = injectPod(pod({ 'conndrain.io/drian': '30s' }), DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(skipped.reason, 'not-annotated');
  assert.deepEqual(skipped.keyProblems.map((p) => p.suggestion), ['conndrain.io/drain']);
  assert.deepEqual(skipped.warnings, ['conndrain: unknown annotation "conndrain.io/drian" is ignored; did you mean conndrain.io/drain?']);

  const injected = injectPod(pod({ 'conndrain.io/drain': '30s', 'conndrain.io/hok': 'exec' }), DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(injected.reason, 'injected');
  assert.equal(injected.hook, DEFAULT_INJECT_CONFIG.defaultHook, 'the misspelt key is ignored');
  assert.match(injected.warnings[0] ?? '', /did you mean conndrain\.io\/hook\?/);

  const invalid = injectPod(pod({ 'conndrain.io/drain': 'soon', 'conndrain.io/hok': 'exec' }), DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(invalid.reason, 'invalid-annotations');
  assert.equal(invalid.keyProblems.length, 1);

  const clean = injectPod(pod({ 'conndrain.io/drain': '30s' }), DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.deepEqual(clean.keyProblems, []);
  assert.deepEqual(clean.warnings, []);
});

test('a pod template (conndrain inject, the workloads webhook) gets the same warnings, named by its workload', () => {
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: pod({}, { app: 'web', 'conndrain.io/drain': '30s' }) } };
  const result = injectWorkload(deployment, 'Deployment', DEFAULT_INJECT_CONFIG);
  assert.equal(result.changed, false);
  assert.deepEqual(result.warnings, ['conndrain: deployment/web: "conndrain.io/drain" is set as a label; conndrain reads annotations only: write it as the annotation conndrain.io/drain']);
});
