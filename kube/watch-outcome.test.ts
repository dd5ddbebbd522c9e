import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_WATCH_MS, statusCode, WatchOutcome } from './watch-outcome.js';

const failed = (statusCodeValue: number): Error => Object.assign(new Error(`HTTP ${statusCodeValue}`), { statusCode: statusCodeValue });

test('a 410, as an ERROR event or an HTTP answer, ends as 410 Gone whatever else was said', () => {
  const byEvent = new WatchOutcome('/p', 0);
  byEvent.errorEvent({ code: 410, message: 'too old resource version' });
  assert.equal(statusCode(byEvent.failure(failed(500), false, 10)), 410);
  assert.equal(statusCode(new WatchOutcome('/p', 0).failure(failed(410), true, 10)), 410);
});

test('the transport\'s error first, then an ERROR event\'s Status, then an unfinished streaming list', () => {
  const outcome = new WatchOutcome('/p', 0);
  outcome.errorEvent({ code: 500, message: 'etcd timeout' });
  const reset = new Error('ECONNRESET');
  assert.equal(outcome.failure(reset, true, 10), reset);
  const status = outcome.failure(null, true, 10);
  assert.equal((status as Error).message, 'watch /p: etcd timeout');
  assert.equal(statusCode(status), 500);
  assert.match((new WatchOutcome('/p', 0).failure(null, true, 5000) as Error).message, /ended before its initial-events-end bookmark/);
});

test('a server end is normal after an event or after a while; at once and empty it is a failure (no hot loop)', () => {
  const early = new WatchOutcome('/p', 1000);
  assert.match((early.failure(null, false, 1000 + MIN_WATCH_MS - 1) as Error).message, /closed at once without an event/);
  assert.equal(early.failure(null, false, 1000 + MIN_WATCH_MS), undefined);
  const busy = new WatchOutcome('/p', 1000);
  busy.counted();
  assert.equal(busy.failure(null, false, 1001), undefined);
});
