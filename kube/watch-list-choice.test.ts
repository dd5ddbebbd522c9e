import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchListChoice } from './watch-list-choice.js';
import { WATCH_LIST_MAX_FAILURES } from './watch-list.js';

const fault = Object.assign(new Error('boom'), { statusCode: 500 });

test('auto: a refusal gives streaming lists up at once, for good', () => {
  const choice = new WatchListChoice('auto');
  assert.equal(choice.streaming, true);
  assert.deepEqual(choice.failed(Object.assign(new Error('gate off'), { statusCode: 422 })), { why: 'gate off', refused: true });
  assert.equal(choice.streaming, false);
});

test('auto: faults give up only after enough in a row; an end marker between them starts the count over', () => {
  const choice = new WatchListChoice('auto');
  for (let i = 1; i < WATCH_LIST_MAX_FAILURES; i++) assert.equal(choice.failed(fault), undefined);
  choice.succeeded();
  for (let i = 1; i < WATCH_LIST_MAX_FAILURES; i++) assert.equal(choice.failed(fault), undefined);
  assert.equal(choice.streaming, true);
  const given = choice.failed(fault);
  assert.equal(given?.refused, false);
  assert.match(given?.why ?? '', /3 streaming lists in a row failed \(last: boom\)/);
  assert.equal(choice.streaming, false);
});

test('on streams whatever happens; off never streams', () => {
  const on = new WatchListChoice('on');
  for (let i = 0; i < 5; i++) assert.equal(on.failed(Object.assign(new Error('x'), { statusCode: 422 })), undefined);
  assert.equal(on.streaming, true);
  assert.equal(new WatchListChoice('off').streaming, false);
});
