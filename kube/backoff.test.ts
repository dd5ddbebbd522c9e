import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JitteredBackoff } from './backoff.js';

test('backoff: exponential, jittered within [d, 2d), capped, reset only after a stable period', () => {
  let now = 0;
  let r = 0;
  const b = new JitteredBackoff({ initialMs: 250, maxMs: 4000, resetAfterMs: 120_000, jitter: 1, now: () => now, random: () => r });
  assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()], [250, 500, 1000, 2000, 4000, 4000]);
  now += 119_000;
  assert.equal(b.next(), 4000, 'failures 119 s apart are not a stable period');
  now += 120_000;
  r = 0.5;
  assert.equal(b.next(), 375, 'reset after 2 minutes without a failure; jitter 1.0 stretches 250 to 375 at 0.5');
});

test('backoff: a 410 relists at once the first time only', () => {
  const now = 0;
  const b = new JitteredBackoff({ initialMs: 250, maxMs: 30_000, resetAfterMs: 120_000, jitter: 1, now: () => now, random: () => 0 });
  const delays = Array.from({ length: 10 }, () => b.next(true));
  assert.deepEqual(delays.slice(0, 4), [0, 250, 500, 1000]);
  assert.ok(delays.reduce((a, d) => a + d, 0) > 130, 'ten 410s take far longer than 130 ms');
});
