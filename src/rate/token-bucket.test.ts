import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TokenBucket } from './token-bucket.js';

test('a burst, then one token per 1/perSecond', () => {
  const b = new TokenBucket({ burst: 3, perSecond: 2 });
  assert.deepEqual([b.take(0), b.take(0), b.take(0), b.take(0)], [true, true, true, false]);
  assert.equal(b.take(499), false, '499 ms at 2/s is 0.998 of a token');
  assert.equal(b.take(500), true);
  assert.equal(b.take(500), false);
  assert.deepEqual([b.take(10_000), b.take(10_000), b.take(10_000), b.take(10_000)], [true, true, true, false], 'a long pause refills the burst, not more');
});

test('a clock that steps back refills nothing', () => {
  const b = new TokenBucket({ burst: 1, perSecond: 1 });
  assert.equal(b.take(5_000), true);
  assert.equal(b.take(1_000), false);
  assert.equal(b.take(5_999), false);
  assert.equal(b.take(6_000), true);
});

test('bad options are a clear error', () => {
  assert.throws(() => new TokenBucket({ burst: -1, perSecond: 1 }), /burst and perSecond must be >= 0/);
  assert.throws(() => new TokenBucket({ burst: 1, perSecond: Number.NaN }), /burst and perSecond must be >= 0/);
});

test('property: over any window, at most burst + rate x window tokens are given', () => {
  fc.assert(fc.property(
    fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 }),
    fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 300 }),
    (burst, perSecond, steps) => {
      const b = new TokenBucket({ burst, perSecond });
      let now = 0;
      let given = 0;
      for (const step of steps) {
        now += step;
        if (b.take(now)) given += 1;
      }
      assert.ok(given <= burst + (now / 1000) * perSecond + 1e-9, `${given} tokens in ${now} ms (burst ${burst}, ${perSecond}/s)`);
    },
  ), { numRuns: 300 });
});
