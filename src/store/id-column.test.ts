import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hashId, IdColumn } from './id-column.js';

const hexDigits = (length: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
// The two packed forms, their near misses (uppercase, a wrong character, one too many), and any text.
const ids = fc.oneof(
  fc.uuid(),
  hexDigits(32),
  fc.uuid().map((u) => u.toUpperCase()),
  hexDigits(32).map((h) => `${h.slice(0, 31)}g`),
  hexDigits(33),
  fc.uuid().map((u) => u.replace(/-/g, '_')),
  fc.string({ maxLength: 40 }),
);

test('id column: every id reads back exactly, matches only itself, and hashes as hashId does', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.option(ids, { nil: undefined })), { maxLength: 60 }), ids, (writes, other) => {
    const column = new IdColumn();
    column.ensure(21);
    const ref = new Map<number, string | undefined>();
    for (const [slot, id] of writes) {
      column.set(slot, id);
      ref.set(slot, id);
    }
    for (const [slot, id] of ref) {
      assert.equal(column.get(slot), id);
      if (id === undefined) continue;
      assert.equal(column.matches(slot, id), true);
      assert.equal(column.matches(slot, other), other === id);
      assert.equal(column.hashAt(slot), hashId(id));
    }
  }), { numRuns: 400 });
});

test('id column: a UUID and 32 hex digits take 16 bytes a slot, no string', () => {
  const column = new IdColumn();
  column.ensure(8192);
  const before = column.bytes;
  for (let slot = 0; slot < 8192; slot++) column.set(slot, slot % 2 === 0 ? '0f8e9c1a-1234-4b6d-9a51-7c2e3f4d5b6a' : '0123456789abcdef0123456789abcdef');
  assert.equal(column.bytes, before, 'no growth: the ids sit in the pages');
  assert.ok(column.bytes <= 8192 * 17, `${column.bytes} bytes for 8,192 ids`);
  assert.equal(column.get(4096), '0f8e9c1a-1234-4b6d-9a51-7c2e3f4d5b6a');
  assert.equal(column.get(4097), '0123456789abcdef0123456789abcdef');
});
