import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { TextColumn } from './text-column.js';

test('text column: reads back every text as a Map would over random writes, through page ends and compactions', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 50, max: 3000 }), (seed, slots) => {
    let state = seed;
    const next = (n: number): number => {
      state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
      return state % n;
    };
    const column = new TextColumn();
    const model = new Map<number, string | undefined>();
    for (let op = 0; op < 20_000; op++) {
      const slot = next(slots);
      const kind = next(20);
      const text = kind === 0 ? undefined : kind === 1 ? `ünïcode-${op}` : kind === 2 ? 'x'.repeat(254 + next(10)) : kind === 3 ? '' : `pod-${op}-`.padEnd(1 + next(255), 'abcdefghij'.charAt(next(10)));
      column.set(slot, text);
      model.set(slot, text);
      if (op % 997 === 0) for (const [s, t] of model) assert.equal(column.get(s), t, `slot ${s} at op ${op}`);
    }
    for (const [s, t] of model) {
      assert.equal(column.get(s), t, `slot ${s}`);
      assert.equal(column.equals(s, t), true);
      assert.equal(column.equals(s, `${t ?? ''}!`), false);
    }
    // Compaction keeps the store near the live bytes: at most a quarter more, plus a page and the page ends.
    const live = [...model.values()].reduce((n, t) => n + (t !== undefined && t.length <= 254 && !t.includes('ü') ? t.length + 5 : 0), 0);
    assert.ok(column.bytes <= live * 1.25 + 3 * 65536 + slots * 4, `${column.bytes} bytes for ${live} live`);
  }), { numRuns: 20 });
});

test('text column: 150,000 pod names take their characters and 9 bytes each, not a string each; replacing them all keeps it so', () => {
  const column = new TextColumn();
  const name = (i: number, gen: number): string => `checkout-api-5f7d8c9b4-${(i * 7919 + gen).toString(36).padStart(5, 'x')}`;
  for (let i = 0; i < 150_000; i++) column.set(i, name(i, 0));
  const first = column.bytes;
  for (let gen = 1; gen <= 3; gen++) for (let i = 0; i < 150_000; i++) column.set(i, name(i, gen));
  for (let i = 0; i < 150_000; i += 1009) assert.equal(column.get(i), name(i, 3));
  const perName = name(0, 0).length;
  assert.ok(first < 150_000 * (perName + 9) * 1.1 + 65536 * 2, `${first} bytes`);
  assert.ok(column.bytes < first * 1.35, `${column.bytes} bytes after three generations (${first} at first)`);
});

test('text column: an empty text whose header ends a page reads back, and churn after it reads back (seed 1871003779 with 809 slots found it)', () => {
  const column = new TextColumn();
  const model = new Map<number, string>();
  const put = (slot: number, text: string): void => {
    column.set(slot, text);
    model.set(slot, text);
  };
  // 252 texts of 254 (259 bytes with their headers), then 134 and 129 bytes: 65,531 bytes, so
  // the empty text's 5-byte header takes the last 5 bytes of the first page.
  for (let i = 0; i < 252; i++) put(i, 'a'.repeat(254));
  put(252, 'b'.repeat(129));
  put(253, 'c'.repeat(124));
  put(254, '');
  assert.equal(column.get(254), '');
  assert.equal(column.equals(254, ''), true);
  assert.equal(column.equals(254, 'x'), false);
  put(255, 'pod-after');
  assert.equal(column.get(255), 'pod-after');
  for (let i = 0; i < 20_000; i++) put(i % 700, i % 3 === 0 ? '' : `pod-${i}`);
  for (const [slot, text] of model) assert.equal(column.get(slot), text, `slot ${slot}`);
  assert.ok(column.bytes < 6 * 65_536, `${column.bytes} bytes`);
});
