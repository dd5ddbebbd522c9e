import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDurationMs } from './duration.js';

test('parses Go-style and plain-seconds durations', () => {
  const cases: Array<[string, number]> = [['30s', 30_000], ['1m30s', 90_000], ['2m', 120_000], ['45', 45_000], ['1h', 3_600_000], ['500ms', 500], ['1.5s', 1500], [' 10s ', 10_000], ['0', 0]];
  for (const [text, ms] of cases) assert.deepEqual(parseDurationMs(text), { ok: true, value: ms }, text);
});

test('rejects what is not a duration, saying what is accepted', () => {
  for (const text of ['', '-5s', 'abc', '10x', '1d', 's', '5 s', '1e3']) {
    const parsed = parseDurationMs(text);
    assert.equal(parsed.ok, false, text);
    if (!parsed.ok) assert.match(parsed.error, /expected a duration like 30s/);
  }
});

test('formats durations back', () => {
  assert.equal(formatDuration(90_000), '1m30s');
  assert.equal(formatDuration(3_600_000), '1h');
  assert.equal(formatDuration(500), '500ms');
  assert.equal(formatDuration(0), '0ms');
});
