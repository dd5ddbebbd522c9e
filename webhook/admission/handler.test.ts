import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerReview } from './answer.js';
import { handleAdmission, type AdmissionHandler } from './handler.js';
import { denied } from './response.js';
import type { AdmissionRequest } from './types.js';

const request: AdmissionRequest = { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: {} };

const throwing = (thrown: unknown): AdmissionHandler => ({
  handle: () => {
    throw thrown;
  },
});

test('handleAdmission fills in the request uid, first, and keeps the outcome', () => {
  const admission = handleAdmission({ handle: () => denied('why', 'no') }, request);
  assert.deepEqual(admission.response, { uid: 'u-1', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no' } });
  assert.equal(Object.keys(admission.response)[0], 'uid');
  assert.deepEqual(admission.outcome, { result: 'denied', reason: 'why', patchOperations: 0 });
});

test('a throwing handler becomes errored: 500 in the response status, allowed false, counted as an error', () => {
  for (const thrown of [new Error('kaput'), 'a string', undefined, { weird: true }]) {
    const admission = handleAdmission(throwing(thrown), request);
    assert.equal(admission.response.uid, 'u-1');
    assert.equal(admission.response.allowed, false);
    assert.equal(admission.response.status?.code, 500);
    assert.equal(admission.response.status?.reason, 'InternalError');
    assert.match(admission.response.status?.message ?? '', /^conndrain: internal error: /);
    assert.deepEqual(admission.outcome, { result: 'error', reason: 'internal-error', patchOperations: 0 });
  }
});

test('a thrown message is bounded and printable like every other message', () => {
  const admission = handleAdmission(throwing(new Error(`bad\n${'x'.repeat(100_000)}`)), request);
  const message = admission.response.status?.message ?? '';
  assert.ok(message.length < 3000, `${message.length}`);
  assert.doesNotMatch(message, /\n/);
});

test('answerReview with a throwing handler still answers HTTP 200 with an AdmissionReview, allowed false', () => {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const answer = answerReview(body, throwing(new Error('kaput')));
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'u-1', allowed: false, status: { code: 500, reason: 'InternalError', message: 'conndrain: internal error: kaput' } },
  });
  assert.equal(answer.outcome.result, 'error');
});

test('answerReview refuses a bad body before the handler is asked', () => {
  let asked = 0;
  const answer = answerReview('{', { handle: () => { asked++; return denied('x', 'y'); } });
  assert.equal(answer.status, 400);
  assert.equal(answer.outcome.result, 'rejected');
  assert.equal(asked, 0);
});
