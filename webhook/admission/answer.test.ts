import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MESSAGE_MAX, runeCount, warningTextProblem } from './printable.js';
import { allowed, denied, errored, patched, resultOf, thrownMessage } from './answer.js';

test('allowed: allowed, no patch, no status; the warnings as given', () => {
  assert.deepEqual(allowed('not-create'), { uid: '', allowed: true, patch: [], warnings: [], reason: 'not-create' });
  assert.deepEqual(allowed('workload-checked', ['a', 'b']).warnings, ['a', 'b']);
  assert.equal(resultOf(allowed('x')), 'allowed');
});

test('allowed: warnings go through the bounded, printable checks (control characters out, duplicates once)', () => {
  const { warnings } = allowed('x', ['line\nbreak', 'line\nbreak', 'bell\u0007']);
  assert.deepEqual(warnings, ['line break', 'bell ']);
  for (const warning of warnings) assert.equal(warningTextProblem(warning), undefined);
});

test('patched: the operations as data, with the warnings; no operations is the same as allowed', () => {
  const operations = [{ op: 'add' as const, path: '/metadata/labels', value: { a: 'b' } }];
  const answer = patched('injected', operations, ['w']);
  assert.deepEqual(answer, { uid: '', allowed: true, patch: operations, warnings: ['w'], reason: 'injected' });
  assert.equal(resultOf(answer), 'allowed');
  assert.deepEqual(patched('injected', [], ['w']), allowed('injected', ['w']));
});

test('denied: allowed false with 403 Forbidden by default, 400 BadRequest when asked; the message bounded', () => {
  const answer = denied('invalid-annotations', 'conndrain: no');
  assert.deepEqual(answer, { uid: '', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'conndrain: no' }, patch: [], warnings: [], reason: 'invalid-annotations' });
  assert.equal(resultOf(answer), 'denied');
  assert.deepEqual(denied('missing-object', 'gone', 'BadRequest').status, { code: 400, reason: 'BadRequest', message: 'gone' });
  assert.equal(resultOf(denied('missing-object', 'gone', 'BadRequest')), 'denied');
  const long = denied('x', `a\u0000${'b'.repeat(10_000)}`).status?.message ?? '';
  assert.ok(runeCount(long) <= MESSAGE_MAX);
  assert.equal(warningTextProblem(long), undefined);
});

test('errored: allowed false with 500 InternalError, counted as an error', () => {
  const answer = errored('boom');
  assert.deepEqual(answer, { uid: '', allowed: false, status: { code: 500, reason: 'InternalError', message: 'boom' }, patch: [], warnings: [], reason: 'internal-error' });
  assert.equal(resultOf(answer), 'error');
  assert.equal(thrownMessage(new Error('kaput')), 'conndrain: internal error: kaput');
  assert.equal(thrownMessage('a string'), 'conndrain: internal error: a string');
});
