import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock, TimerHandle } from '../../time/clock.js';
import { EventRetryQueue, isRetryable, type EventWrite } from './event-retry.js';

/** A clock whose timers run when the test says. */
function manualClock(): Clock & { fire(): void; pending: number } {
  let now = 0;
  const timers: Array<{ fn: () => void; at: number; live: boolean }> = [];
  return {
    now: () => now,
    setTimeout(fn, ms): TimerHandle {
      const t = { fn, at: now + ms, live: true };
      timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
    setInterval(): TimerHandle {
      throw new Error('not used');
    },
    fire() {
      const t = timers.filter((x) => x.live).sort((a, b) => a.at - b.at)[0];
      if (t === undefined) return;
      t.live = false;
      now = Math.max(now, t.at);
      t.fn();
    },
    get pending() {
      return timers.filter((x) => x.live).length;
    },
  };
}

const flushPromises = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('network errors, 5xx and 429 are retried; other 4xx are not', () => {
  assert.equal(isRetryable(new Error('ECONNREFUSED')), true);
  assert.equal(isRetryable(Object.assign(new Error('x'), { statusCode: 503 })), true);
  assert.equal(isRetryable(Object.assign(new Error('x'), { statusCode: 429 })), true);
  assert.equal(isRetryable(Object.assign(new Error('x'), { statusCode: 422 })), false);
});

test('an Event posted while the API restarts is written once it answers, in order', async () => {
  const clock = manualClock();
  const written: string[] = [];
  let up = false;
  const write = (what: string): EventWrite => ({ what, send: () => (up ? Promise.resolve(written.push(what)) : Promise.reject(new Error('ECONNREFUSED'))) });
  const dropped: string[] = [];
  const queue = new EventRetryQueue({ clock, capacity: 10, initialMs: 100, maxMs: 1000, dropped: (w, why) => dropped.push(`${w.what}:${why}`), random: () => 0 });
  queue.failed(write('a DrainInterrupted'), new Error('ECONNREFUSED'));
  queue.failed(write('b DrainStarted'), new Error('ECONNREFUSED'));
  assert.equal(queue.size, 2);
  clock.fire();
  await flushPromises();
  assert.deepEqual(written, [], 'still down: nothing written, backed off again');
  assert.equal(clock.pending, 1);
  up = true;
  clock.fire();
  await flushPromises();
  await flushPromises();
  assert.deepEqual(written, ['a DrainInterrupted', 'b DrainStarted']);
  assert.equal(queue.size, 0);
  assert.deepEqual(dropped, []);
});

test('the queue is bounded: past its capacity the oldest is dropped and counted; refusals are dropped', () => {
  const clock = manualClock();
  const dropped: string[] = [];
  const queue = new EventRetryQueue({ clock, capacity: 2, initialMs: 100, maxMs: 1000, dropped: (w, why) => dropped.push(`${w.what}:${why}`) });
  const failing = (what: string): EventWrite => ({ what, send: () => Promise.reject(new Error('down')) });
  queue.failed(failing('1'), new Error('down'));
  queue.failed(failing('2'), new Error('down'));
  queue.failed(failing('3'), new Error('down'));
  queue.failed(failing('4'), Object.assign(new Error('bad'), { statusCode: 400 }));
  assert.deepEqual(dropped, ['1:overflow', '4:refused']);
  assert.equal(queue.size, 2);
  assert.deepEqual(queue.stop().map((w) => w.what), ['2', '3']);
});
