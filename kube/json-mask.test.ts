import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { FieldMask } from '../src/field-mask.js';
import { POD_FIELDS, prunePod } from '../src/pod/prune.js';
import type { PodLike } from '../src/pod/pod-like.js';
import { compileMask, JsonMask, keyMask, type CompiledMask } from './json-mask.js';

/**
 * The reference: the mask applied to a parsed value, with the same key lookup (keyMask), so the
 * properties below check the byte scanner against JSON.parse; the lookup has its own examples.
 */
function select(value: unknown, fields: FieldMask): unknown {
  return selectCompiled(value, compileMask(fields));
}

function selectCompiled(value: unknown, mask: CompiledMask): unknown {
  if (mask === true) return value;
  if (Array.isArray(value)) return value.map((v: unknown) => selectCompiled(v, mask));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = keyMask(mask, k);
    if (sub !== undefined) Object.defineProperty(out, k, { value: selectCompiled(v, sub), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function maskText(text: string, mask: FieldMask): unknown {
  return JSON.parse(new JsonMask(mask).apply(Buffer.from(text, 'utf8')));
}

const key = fc.oneof(fc.constantFrom('a', 'b', 'metadata', 'name', 'x\\y', 'é', '"q"', 'conndrain.io/p'), fc.string({ maxLength: 4 }), fc.string({ maxLength: 4, unit: 'grapheme' }));
const mask: fc.Arbitrary<FieldMask> = fc.letrec<{ mask: FieldMask }>((tie) => ({
  mask: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(true as const), fc.dictionary(fc.oneof(key, key.map((k) => `${k}*`)), tie('mask'), { maxKeys: 4 })),
})).mask;
const indent = fc.oneof(fc.constant(undefined), fc.constantFrom(0, 1, 2, '\t', ' '));

test('json mask: the masked text parses to the reference selection of the full parse (any JSON, any mask, any indent)', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 5 }), mask, indent, (v, m, ind) => {
      const text = JSON.stringify(v, null, ind);
      assert.deepStrictEqual(maskText(text, m), select(JSON.parse(text), m));
    }),
    { numRuns: 2000 },
  );
});

test('json mask: masks over objects whose keys the mask names (so the masked parts are exercised)', () => {
  const keys = ['a', 'b', 'x\\y', 'é', 'a"b'];
  const obj = fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), fc.dictionary(fc.constantFrom(...keys, 'ab', 'other'), tie('v'), { maxKeys: 5 }), fc.array(tie('v'), { maxLength: 3 })),
  })).v;
  const m = fc.letrec<{ m: FieldMask }>((tie) => ({
    m: fc.oneof({ depthSize: 'small' }, fc.constant(true as const), fc.dictionary(fc.constantFrom(...keys, 'a*', '*'), tie('m'), { maxKeys: 3 })),
  })).m;
  fc.assert(
    fc.property(obj, m, indent, (v, mk, ind) => {
      const text = JSON.stringify(v, null, ind);
      assert.deepStrictEqual(maskText(text, mk), select(JSON.parse(text), mk));
    }),
    { numRuns: 3000 },
  );
});

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12, unit: 'grapheme' }), fc.constantFrom('a\\"b', '\\\\', 'x\u0001y', '\u2028', '😀'));
const annotations = fc.dictionary(fc.oneof(fc.constantFrom('conndrain.io/drain-ms', 'conndrain.io/drain', 'conndrain.io/x\\"', 'kubectl.kubernetes.io/last-applied-configuration', 'k8s.io/initial-events-end', 'other/x'), text), text, { maxKeys: 5 });
const pod = fc.record(
  {
    apiVersion: fc.constant('v1'),
    kind: fc.constant('Pod'),
    metadata: fc.record(
      {
        name: text,
        namespace: text,
        uid: fc.uuid(),
        resourceVersion: fc.nat().map(String),
        labels: annotations,
        annotations: fc.tuple(annotations, fc.string({ minLength: 2000, maxLength: 4000 })).map(([a, big]) => ({ ...a, 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ big }) })),
        deletionTimestamp: fc.constant('2026-12-01T10:00:00Z'),
        deletionGracePeriodSeconds: fc.nat(),
        managedFields: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    spec: fc.record({ nodeName: text, hostNetwork: fc.boolean(), terminationGracePeriodSeconds: fc.nat(), containers: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
    status: fc.record(
      {
        phase: fc.constantFrom('Running', 'Pending', 'Succeeded'),
        podIP: text,
        podIPs: fc.array(fc.record({ ip: text, extra: text }, { requiredKeys: [] }), { maxLength: 3 }),
        conditions: fc.array(fc.record({ type: fc.constantFrom('Ready', 'PodScheduled', 'Initialized'), status: fc.constantFrom('True', 'False'), lastTransitionTime: text }, { requiredKeys: [] }), { maxLength: 5 }),
        containerStatuses: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: [] },
    ),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: ['metadata'] },
);

test('json mask: a pod masked with POD_FIELDS prunes exactly as the full pod (the mask keeps every field prunePod reads)', () => {
  const podMask = new JsonMask(POD_FIELDS);
  fc.assert(
    fc.property(pod, indent, (p, ind) => {
      const full = JSON.stringify(p, null, ind);
      const masked = JSON.parse(podMask.apply(Buffer.from(full, 'utf8'))) as PodLike;
      assert.deepStrictEqual(prunePod(masked), prunePod(JSON.parse(full) as PodLike));
      assert.deepStrictEqual(masked, select(JSON.parse(full), POD_FIELDS));
    }),
    { numRuns: 500 },
  );
});

test('json mask: POD_FIELDS drops the big annotations and everything prunePod does not read', () => {
  const big = { metadata: { name: 'p', annotations: { 'conndrain.io/drain-ms': '5000', 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(5000) }, managedFields: [{ a: 1 }] }, spec: { containers: [{ name: 'c' }] } };
  assert.deepStrictEqual(maskText(JSON.stringify(big), POD_FIELDS), { metadata: { name: 'p', annotations: { 'conndrain.io/drain-ms': '5000' } }, spec: {} });
});

test('json mask: escaped keys are compared decoded, duplicate keys keep the last, prefixes match, arrays are masked element-wise', () => {
  assert.deepStrictEqual(maskText('{"\\u0061":1,"b":2}', { a: true }), { a: 1 });
  assert.deepStrictEqual(maskText('{"a\\\\":1,"a\\"":2,"a":3}', { 'a\\': true, a: true }), { 'a\\': 1, a: 3 });
  assert.deepStrictEqual(maskText('{"a":{"x":1,"y":2},"b":0,"a":{"y":3,"x":4}}', { a: { x: true } }), { a: { x: 4 } });
  assert.deepStrictEqual(maskText('{"a":1,"a":{"x":1,"z":2}}', { a: { x: true } }), { a: { x: 1 } });
  assert.deepStrictEqual(maskText('{"conndrain.io/a":"1","conndrain.iox":"2","k8s.io/initial-events-end":"true"}', { 'conndrain.io/*': true, 'k8s.io/initial-events-end': true }), { 'conndrain.io/a': '1', 'k8s.io/initial-events-end': 'true' });
  assert.deepStrictEqual(maskText(' [ {"a":1,"b":2} , 3 , [ {"b":1} ] ] ', { a: true }), [{ a: 1 }, 3, [{}]]);
  assert.deepStrictEqual(maskText('{"a":"x\\\\\\"}\\\\","b":"é😀\\u00e9"}', { b: true }), { b: 'é😀é' });
  assert.deepStrictEqual(maskText('{"a":null,"b":"s"}', { a: { x: true }, b: { y: true } }), { a: null, b: 's' });
});

test('json mask: the key lookup: an exact key wins over a prefix, a longer prefix over a shorter one, `*` alone keeps every key', () => {
  const mask: FieldMask = { 'a*': true, 'ab*': { x: true }, abc: { y: true } };
  const text = '{"a1":{"x":1,"y":2},"ab1":{"x":1,"y":2},"abc":{"x":1,"y":2},"a*":{"x":1,"y":2},"b":{"x":1}}';
  assert.deepStrictEqual(maskText(text, mask), { a1: { x: 1, y: 2 }, ab1: { x: 1 }, abc: { y: 2 }, 'a*': { x: 1, y: 2 } });
  assert.deepStrictEqual(maskText('{"a":1,"":2}', { '*': true }), { a: 1, '': 2 });
  const node = compileMask({ 'conndrain.io/*': true, 'conndrain.io/drain': { x: true } });
  assert.ok(node !== true);
  assert.deepStrictEqual(keyMask(node, 'conndrain.io/drain'), compileMask({ x: true }));
  assert.equal(keyMask(node, 'conndrain.io/hook'), true);
  assert.equal(keyMask(node, 'conndrain.iox'), undefined);
});

test('json mask: malformed input is an error, dropped parts included, and so is nesting past the bound', () => {
  const bad = ['', '{', '{"a":1', '{"a":1,}', '{"a" 1}', '{"b":tru}', '{"b":[1,]}', '{"b":"x\u0001"}', '{"b":"\\x"}', '{"b":"\\u12"}', '{"b":01}', '{"b":1.}', '{"b":-}', '{"b":1e}', '{"a":1} x', '{"b":{"c":1]}', '[1 2]', "{'a':1}", '{"b":"unterminated}'];
  for (const text of bad) {
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    assert.throws(() => new JsonMask({ a: true }).apply(Buffer.from(text)), SyntaxError, text);
  }
  const deep = `${'['.repeat(2000)}${']'.repeat(2000)}`;
  assert.throws(() => new JsonMask({ a: true }).apply(Buffer.from(`{"b":${deep}}`)), /nested too deeply/);
});

test('json mask: a range of a buffer, and a mask object reused across calls', () => {
  const m = new JsonMask({ a: true });
  const buf = Buffer.from('xx{"a":1,"b":2}yy{"a":2}');
  assert.equal(m.apply(buf, 2, 15), '{"a":1}');
  assert.equal(m.apply(buf, 17), '{"a":2}');
  assert.equal(m.apply(Buffer.from(`{"b":"${'z'.repeat(100_000)}","a":3}`)), '{"a":3}');
});
