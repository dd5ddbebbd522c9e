import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundMessage, boundWarnings, MESSAGE_MAX, printableLine, runeCount, WARNING_MAX, WARNINGS_TOTAL_MAX, warningTextProblem } from './printable.js';

test('warningTextProblem refuses what NewWarningHeader refuses: C0, DEL, C1, invalid UTF-8', () => {
  for (const bad of ['a\nb', 'tab\there', 'nul\u0000', 'del\u007f', 'c1 start\u0080', 'NEL\u0085', 'c1 end\u009f', 'esc\u001b[31m', 'lone \ud800 surrogate', 'lone \udfff low']) {
    assert.notEqual(warningTextProblem(bad), undefined, JSON.stringify(bad));
  }
  for (const good of ['plain', 'schläf', 'nbsp\u00a0ok', '日本語', 'emoji 😀', 'quote " and \\ backslash', '']) {
    assert.equal(warningTextProblem(good), undefined, JSON.stringify(good));
  }
});

test('printableLine makes any text pass the check, within its bound, saying how long it was', () => {
  const hostile = `x\u0085y\u0000z\ud800${'w'.repeat(5000)}`;
  const line = printableLine(hostile, 100);
  assert.equal(warningTextProblem(line), undefined);
  assert.ok(runeCount(line) <= 100, line);
  assert.match(line, /… \(cut, 5006 characters in all\)$/);
  assert.equal(printableLine('short\nline', 100), 'short line');
});

test('boundWarnings: every warning passes, none over WARNING_MAX, all within WARNINGS_TOTAL_MAX, duplicates once', () => {
  const many = [...Array.from({ length: 40 }, (_, i) => `warning ${i} ${'\u0085'.repeat(3)}${'v'.repeat(400)}`), 'same', 'same', 'x'.repeat(100_000)];
  const out = boundWarnings(many);
  for (const w of out) {
    assert.equal(warningTextProblem(w), undefined);
    assert.ok(runeCount(w) <= WARNING_MAX);
  }
  assert.ok(out.reduce((n, w) => n + runeCount(w), 0) <= WARNINGS_TOTAL_MAX);
  assert.match(out[out.length - 1] ?? '', /more warning\(s\) left out/);
  assert.deepEqual(boundWarnings(['a', 'a', 'b']), ['a', 'b']);
});

test('boundMessage bounds a megabyte message', () => {
  const message = boundMessage(`conndrain: ${'m'.repeat(2_000_000)}`);
  assert.ok(runeCount(message) <= MESSAGE_MAX);
  assert.equal(warningTextProblem(message), undefined);
});
