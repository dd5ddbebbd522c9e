/** The endpoint digest: equal bytes agree wherever they lie; bytes that differ in one place never do. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { dataViewOf, digestInto } from './digest.js';

function digestOf(bytes: Uint8Array, start = 0, end = bytes.length, seed?: { high: number; low: number }): [number, number] {
  const out = new Uint32Array(2);
  digestInto(dataViewOf(bytes), start, end, out, 0, seed);
  return [out[0] as number, out[1] as number];
}

test('property: the same bytes digest alike at any offset; one byte changed changes both halves', () => {
  fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.uint8Array({ maxLength: 20 }), (bytes, at, delta, prefix) => {
    const shifted = new Uint8Array(prefix.length + bytes.length);
    shifted.set(prefix);
    shifted.set(bytes, prefix.length);
    assert.deepEqual(digestOf(shifted, prefix.length, shifted.length), digestOf(bytes));
    const changed = Uint8Array.from(bytes);
    const i = at % bytes.length;
    changed[i] = ((changed[i] as number) + delta) & 0xff;
    const [h1, l1] = digestOf(bytes);
    const [h2, l2] = digestOf(changed);
    // Each step of each half is a bijection of its state for a given word: one byte apart, never equal.
    assert.notEqual(h1, h2);
    assert.notEqual(l1, l2);
  }), { numRuns: 500 });
});

test('a prefix digests apart from the whole; another seed gives another digest', () => {
  const bytes = Buffer.from('10.0.0.7 node-3 0f8e9c1a-1111-4b6d-9a51-7c2e3f4d5b6a');
  assert.notDeepEqual(digestOf(bytes, 0, bytes.length - 1), digestOf(bytes));
  assert.notDeepEqual(digestOf(bytes, 0, bytes.length, { high: 1, low: 2 }), digestOf(bytes, 0, bytes.length, { high: 3, low: 4 }));
});
