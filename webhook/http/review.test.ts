import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowed, denied, patched } from '../admission/answer.js';
import { encodeReview } from './review.js';

const decode = (patch: string | undefined): unknown => (patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString('utf8')));

test('encodeReview: uid first, then allowed, warnings, patchType, patch (base64 of the operations)', () => {
  const operations = [{ op: 'add' as const, path: '/metadata/labels', value: { a: 'b' } }];
  const { apiVersion, kind, response } = encodeReview({ ...patched('injected', operations, ['w']), uid: 'u-1' });
  assert.equal(apiVersion, 'admission.k8s.io/v1');
  assert.equal(kind, 'AdmissionReview');
  assert.deepEqual(Object.keys(response), ['uid', 'allowed', 'warnings', 'patchType', 'patch'], 'field order of the encoded response');
  assert.equal(response.patchType, 'JSONPatch');
  assert.deepEqual(decode(response.patch), operations);
});

test('encodeReview leaves out an empty patch and empty warnings; a deny carries its status', () => {
  assert.deepEqual(encodeReview({ ...allowed('not-create'), uid: 'u-2' }).response, { uid: 'u-2', allowed: true });
  assert.deepEqual(encodeReview({ ...allowed('checked', ['w']), uid: 'u-3' }).response, { uid: 'u-3', allowed: true, warnings: ['w'] });
  assert.deepEqual(encodeReview({ ...denied('invalid-annotations', 'no'), uid: 'u-4' }).response, { uid: 'u-4', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no' } });
});
