import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quoteValue } from './quote.js';

test('short values are quoted as they are', () => {
  assert.equal(quoteValue('30s'), '"30s"');
  assert.equal(quoteValue(''), '""');
});

test('long values are cut and their length is said', () => {
  assert.equal(quoteValue('x'.repeat(1_048_576)), `"${'x'.repeat(64)}…" (1048576 characters)`);
  assert.equal(quoteValue('abcdef', 3), '"abc…" (6 characters)');
});

test('characters count as code points: a surrogate pair is never split', () => {
  assert.equal(quoteValue('😀😀😀', 2), '"😀😀…" (3 characters)');
});

test('control characters, C1 included, are written as escapes', () => {
  assert.equal(quoteValue('a\nb\u0085c\u001b[31m'), '"a\\u000ab\\u0085c\\u001b[31m"');
});
