import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MESSAGE_MAX, runeCount, warningTextProblem } from '../admission/printable.js';
import { decodeReview } from './hygiene.js';

const reviewWith = (request: Record<string, unknown>): string => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', ...request } });

test('decodeReview hands on a request whose fields have the types AdmissionRequest gives them', () => {
  const request = { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'shop', name: 'web', operation: 'CREATE', dryRun: false, object: { any: ['json'] }, oldObject: null };
  assert.deepEqual(decodeReview(reviewWith(request)), { ok: true, value: request });
  assert.deepEqual(decodeReview(reviewWith({})), { ok: true, value: { uid: 'u-1' } }, 'every field but uid may be absent');
});

test('decodeReview refuses a request field of the wrong type with 400 malformed-request, naming the field', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ kind: 'Pod' }, 'request.kind is a string, expected an object with group, version, kind'],
    [{ kind: { group: '', version: 'v1', kind: 7 } }, 'request.kind.kind is a number, expected a string'],
    [{ resource: ['pods'] }, 'request.resource is an array, expected an object with group, version, resource'],
    [{ operation: 1 }, 'request.operation is a number, expected a string'],
    [{ namespace: { a: 1 } }, 'request.namespace is an object, expected a string'],
    [{ subResource: null }, 'request.subResource is null, expected a string'],
    [{ name: true }, 'request.name is a boolean, expected a string'],
    [{ dryRun: 'yes' }, 'request.dryRun is a string, expected a boolean'],
  ];
  for (const [fields, problem] of cases) {
    const decoded = decodeReview(reviewWith(fields));
    assert.deepEqual(decoded, { ok: false, error: { status: 400, code: 'malformed-request', message: `${problem} (in an admission.k8s.io/v1 AdmissionReview)` } }, JSON.stringify(fields));
  }
});

test('decodeReview messages are bounded and printable, whatever the body echoes', () => {
  const decoded = decodeReview(JSON.stringify({ apiVersion: `v\u0085${'x'.repeat(100_000)}`, kind: 'AdmissionReview' }));
  assert.ok(!decoded.ok);
  assert.equal(decoded.error.code, 'wrong-api-version');
  assert.ok(runeCount(decoded.error.message) <= MESSAGE_MAX);
  assert.equal(warningTextProblem(decoded.error.message), undefined);
});
