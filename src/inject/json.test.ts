import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_INJECT_CONFIG } from '../config/webhook.js';
import { copyWith } from './json.js';
import { injectPod, seededRandom, type JsonObject } from './index.js';

test('copyWith: same keys, values and order as a spread, and the source is left alone', () => {
  const source = JSON.parse('{"b":1,"a":{"x":1},"c":[1]}') as JsonObject;
  const copy = copyWith(source, { a: 2, d: 3 });
  assert.deepEqual(Object.keys(copy), Object.keys({ ...source, ...{ a: 2, d: 3 } }));
  assert.deepEqual(copy, { b: 1, a: 2, c: [1], d: 3 });
  assert.equal(copy['c'], source['c']);
  assert.deepEqual(source, { b: 1, a: { x: 1 }, c: [1] });
  assert.deepEqual(copyWith(undefined, { k: 'v' }), { k: 'v' });
});

test('copyWith: an own "__proto__" key from untrusted JSON is copied as data, never set as the prototype', () => {
  const source = JSON.parse('{"__proto__":{"polluted":true},"app":"web"}') as JsonObject;
  const copy = copyWith(source, { 'conndrain.io/managed': 'true' });
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.deepEqual(Object.keys(copy), ['__proto__', 'app', 'conndrain.io/managed']);
  assert.equal((copy as { polluted?: unknown }).polluted, undefined);
});

test('injection keeps a "__proto__" label of an admitted pod as a label', () => {
  const pod = JSON.parse('{"metadata":{"labels":{"__proto__":{"x":1},"app":"web"},"annotations":{"conndrain.io/drain":"30s"}},"spec":{"containers":[{"name":"app"}]}}') as JsonObject;
  const result = injectPod(pod, DEFAULT_INJECT_CONFIG, seededRandom(1));
  const labels = (result.pod as { metadata: { labels: JsonObject } }).metadata.labels;
  assert.ok(Object.hasOwn(labels, '__proto__'));
  assert.equal(Object.getPrototypeOf(labels), Object.prototype);
  assert.equal(labels['conndrain.io/managed'], 'true');
});
