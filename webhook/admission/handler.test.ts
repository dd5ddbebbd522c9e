import { test } from 'node:test';
import assert from 'node:assert/strict';
import { denied, resultOf } from './answer.js';
import { handleAdmission, type AdmissionHandler } from './handler.js';
import type { AdmissionRequest } from './types.js';

const request: AdmissionRequest = { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: {} };

const throwing = (thrown: unknown): AdmissionHandler => ({
  handle: () => {
    throw thrown;
  },
});

test('handleAdmission fills in the request uid and keeps the rest of the answer', () => {
  const answer = handleAdmission({ handle: () => denied('why', 'no') }, request);
  assert.deepEqual(answer, { ...denied('why', 'no'), uid: 'u-1' });
  assert.equal(resultOf(answer), 'denied');
});

test('a throwing handler becomes errored: 500 in the status, allowed false, counted as an error', () => {
  for (const thrown of [new Error('kaput'), 'a string', undefined, { weird: true }]) {
    const answer = handleAdmission(throwing(thrown), request);
    assert.equal(answer.uid, 'u-1');
    assert.equal(answer.allowed, false);
    assert.equal(answer.status?.code, 500);
    assert.equal(answer.status?.reason, 'InternalError');
    assert.match(answer.status?.message ?? '', /^conndrain: internal error: /);
    assert.equal(resultOf(answer), 'error');
    assert.equal(answer.reason, 'internal-error');
  }
});

test('a thrown message is bounded and printable like every other message', () => {
  const answer = handleAdmission(throwing(new Error(`bad\n${'x'.repeat(100_000)}`)), request);
  const message = answer.status?.message ?? '';
  assert.ok(message.length < 3000, `${message.length}`);
  assert.doesNotMatch(message, /\n/);
});
