import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InitialEvents, refusalOf, watchListQuery, WatchListRefused } from './watch-list.js';

const endBookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true' } } };

test('initial events: ADDED events are taken, the annotated bookmark ends them; anything else before it is a plain watch', () => {
  const initial = new InitialEvents();
  assert.equal(initial.event('ADDED', { metadata: { uid: 'a' } }), 'take');
  assert.equal(initial.ended, false);
  assert.equal(initial.event('BOOKMARK', endBookmark), 'end');
  assert.equal(initial.ended, true);
  for (const [type, raw] of [['MODIFIED', {}], ['DELETED', {}], ['BOOKMARK', { metadata: { resourceVersion: '7' } }], ['BOOKMARK', { metadata: { annotations: { 'k8s.io/initial-events-end': 'false' } } }]] as const) {
    const step = new InitialEvents().event(type, raw);
    assert.ok(step instanceof WatchListRefused, `${type} ${JSON.stringify(raw)}`);
    assert.match(step.message, /does not serve streaming lists/);
  }
});

test('a 422 or 400 answer is a refusal; a 5xx, a 410 or a reset is a passing failure', () => {
  assert.ok(refusalOf(Object.assign(new Error('Unprocessable Entity'), { statusCode: 422 })) instanceof WatchListRefused);
  assert.ok(refusalOf(Object.assign(new Error('Bad Request'), { statusCode: 400 })) instanceof WatchListRefused);
  for (const error of [Object.assign(new Error('x'), { statusCode: 500 }), Object.assign(new Error('x'), { statusCode: 410 }), new Error('ECONNRESET'), null, undefined, 'text']) {
    assert.equal(refusalOf(error), undefined, String(error));
  }
});

test('the streaming-list query: as client-go asks it, the current state when no resourceVersion was synced', () => {
  assert.deepEqual(watchListQuery(undefined), { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, resourceVersion: '' });
  assert.equal(watchListQuery('123').resourceVersion, '123');
});
