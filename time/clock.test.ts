import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from './clock.js';

test('systemClock.setTimeout never runs its callback before Date.now() says it is due', async () => {
  // libuv may fire a timer a millisecond early against Date.now(); pretend it always does.
  const realNow = Date.now.bind(Date);
  let skew = 0;
  const now = mock.method(Date, 'now', () => realNow() - skew);
  try {
    const armedAt = Date.now();
    const fired = new Promise<number>((resolve) => systemClock.setTimeout(() => resolve(Date.now()), 20));
    skew = 3; // from here on the wall clock reads 3 ms behind the timers
    const firedAt = await fired;
    assert.ok(firedAt - armedAt >= 20, `fired ${firedAt - armedAt} ms after arming, before its 20 ms`);
  } finally {
    now.mock.restore();
  }
});

test('systemClock.setTimeout: a wall clock that jumped back does not hold the timer (fires on its own time)', async () => {
  const realNow = Date.now.bind(Date);
  let skew = 0;
  const now = mock.method(Date, 'now', () => realNow() - skew);
  try {
    const armed = performance.now();
    skew = 60_000;
    await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 20));
    assert.ok(performance.now() - armed < 1000, 'fired near its time');
  } finally {
    now.mock.restore();
  }
});

test('systemClock.setTimeout: cancel stops a re-armed timer too', async () => {
  let fired = false;
  const handle = systemClock.setTimeout(() => (fired = true), 5);
  handle.cancel();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(fired, false);
});
