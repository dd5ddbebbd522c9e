import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pooledRandom } from './random.js';

test('pooled random bytes: right length, independent copies, no repeats across refills', () => {
  const random = pooledRandom(64);
  const seen = new Set<string>();
  const first = random(16);
  const copy = Buffer.from(first).toString('hex');
  for (let i = 0; i < 1000; i++) {
    const bytes = random(16);
    assert.equal(bytes.length, 16);
    const hex = Buffer.from(bytes).toString('hex');
    assert.ok(!seen.has(hex), 'a 128-bit value repeated');
    seen.add(hex);
  }
  assert.equal(Buffer.from(first).toString('hex'), copy, 'earlier results are not overwritten by refills');
  assert.equal(random(100).length, 100);
});
