import { test } from 'node:test';
import assert from 'node:assert/strict';
import { denied } from '../admission/answer.js';
import type { AdmissionHandler } from '../admission/handler.js';
import { admitReview } from './admit.js';
import { encodeReview } from './review.js';

const request = { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: {} };
const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });

test('admitReview with a throwing handler still answers, allowed false, and encodes to an AdmissionReview', () => {
  const throwing: AdmissionHandler = {
    handle: () => {
      throw new Error('kaput');
    },
  };
  const admitted = admitReview(body, throwing);
  assert.ok(admitted.ok);
  assert.deepEqual(admitted.value.request, request);
  assert.deepEqual(encodeReview(admitted.value.answer), {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'u-1', allowed: false, status: { code: 500, reason: 'InternalError', message: 'conndrain: internal error: kaput' } },
  });
});

test('admitReview refuses a bad body before the handler is asked', () => {
  let asked = 0;
  const admitted = admitReview('{', { handle: () => { asked++; return denied('x', 'y'); } });
  assert.ok(!admitted.ok);
  assert.equal(admitted.error.status, 400);
  assert.equal(admitted.error.code, 'malformed-json');
  assert.equal(asked, 0);
});
