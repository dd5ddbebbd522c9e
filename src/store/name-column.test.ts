import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { NameColumn } from './name-column.js';

const part = fc.constantFrom('web', 'checkout-api', 'db', '', 'x'.repeat(300), 'ünï', 'shop/web');
const name = fc.oneof(
  fc.constant(undefined),
  fc.tuple(part, fc.constantFrom('-', '', '--'), fc.constantFrom('5f7d8c9b4-x7k2p', '0', '', 'abc', 'ünï', 'y'.repeat(260))).map(([a, b, c]) => `${a}${b}${c}`),
  fc.string({ maxLength: 12 }),
);

test('name column: reads back every name as a Map would, and says equal exactly for the stored one (prefixes shared, reused, dropped)', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(40), name), { maxLength: 300, size: 'max' }), fc.array(name, { maxLength: 20 }), (writes, probes) => {
    const column = new NameColumn();
    const model = new Map<number, string | undefined>();
    for (const [slot, n] of writes) {
      column.set(slot, n);
      model.set(slot, n);
    }
    for (const [slot, n] of model) {
      assert.equal(column.get(slot), n, `slot ${slot}`);
      assert.equal(column.equals(slot, n), true);
      for (const p of probes) assert.equal(column.equals(slot, p), p === n, `slot ${slot} holds ${String(n)}, probe ${String(p)}`);
    }
  }), { numRuns: 200 });
});

test('name column: 150,000 Deployment pod names of 24 characters take ~18 bytes each (a prefix id, a position, a header and 5 characters), not 33; replacing them keeps it so', () => {
  const column = new NameColumn();
  const nameOf = (i: number, gen: number): string => `svc-${String(i % 2000).padStart(4, '0')}-7d9f8c${gen}-${(i * 7919 + gen).toString(36).padStart(5, 'x').slice(-5)}`;
  for (let i = 0; i < 150_000; i++) column.set(i, nameOf(i, 0));
  const first = column.bytes;
  for (let gen = 1; gen <= 3; gen++) for (let i = 0; i < 150_000; i++) column.set(i, nameOf(i, gen));
  for (let i = 0; i < 150_000; i += 997) assert.equal(column.get(i), nameOf(i, 3));
  assert.ok(first < 150_000 * 19, `${first} bytes`);
  assert.ok(column.bytes < first * 1.35, `${column.bytes} bytes after three generations (${first} at first)`);
});
