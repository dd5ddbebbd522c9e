import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MESSAGE_MAX, runeCount, warningTextProblem } from './printable.js';
import { allowed, denied, errored, patched, thrownMessage } from './response.js';

const decode = (patch: string | undefined): unknown => (patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString('utf8')));

test('allowed: allowed, no patch, no status; warnings only when there are some', () => {
  assert.deepEqual(allowed('not-create'), { verdict: { allowed: true }, outcome: { result: 'allowed', reason: 'not-create', patchOperations: 0 } });
  assert.deepEqual(allowed('workload-checked', ['a', 'b']).verdict, { allowed: true, warnings: ['a', 'b'] });
});

test('allowed: warnings go through the bounded, printable checks (control characters out, duplicates once)', () => {
  const { verdict } = allowed('x', ['line\nbreak', 'line\nbreak', 'bell\u0007']);
  assert.deepEqual(verdict.warnings, ['line break', 'bell ']);
  for (const warning of verdict.warnings ?? []) assert.equal(warningTextProblem(warning), undefined);
});

test('patched: a base64 JSONPatch with its operation count; no operations is the same as allowed', () => {
  const operations = [{ op: 'add' as const, path: '/metadata/labels', value: { a: 'b' } }];
  const result = patched('injected', operations, ['w']);
  assert.deepEqual(Object.keys(result.verdict), ['allowed', 'warnings', 'patchType', 'patch'], 'field order of the encoded response');
  assert.equal(result.verdict.allowed, true);
  assert.equal(result.verdict.patchType, 'JSONPatch');
  assert.deepEqual(decode(result.verdict.patch), operations);
  assert.deepEqual(result.outcome, { result: 'allowed', reason: 'injected', patchOperations: 1 });
  assert.deepEqual(patched('injected', [], ['w']), allowed('injected', ['w']));
});

test('denied: allowed false with 403 Forbidden by default, 400 BadRequest when asked; the message bounded', () => {
  assert.deepEqual(denied('invalid-annotations', 'conndrain: no'), {
    verdict: { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'conndrain: no' } },
    outcome: { result: 'denied', reason: 'invalid-annotations', patchOperations: 0 },
  });
  assert.deepEqual(denied('missing-object', 'gone', 'BadRequest').verdict.status, { code: 400, reason: 'BadRequest', message: 'gone' });
  const long = denied('x', `a\u0000${'b'.repeat(10_000)}`).verdict.status?.message ?? '';
  assert.ok(runeCount(long) <= MESSAGE_MAX);
  assert.equal(warningTextProblem(long), undefined);
});

test('errored: allowed false with 500 InternalError, counted as an error', () => {
  assert.deepEqual(errored('boom'), {
    verdict: { allowed: false, status: { code: 500, reason: 'InternalError', message: 'boom' } },
    outcome: { result: 'error', reason: 'internal-error', patchOperations: 0 },
  });
  assert.equal(thrownMessage(new Error('kaput')), 'conndrain: internal error: kaput');
  assert.equal(thrownMessage('a string'), 'conndrain: internal error: a string');
});
