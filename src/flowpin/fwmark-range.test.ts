import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocateMarks, DEFAULT_FWMARK_RANGE, formatMark, inRange, parseFwmarkRange } from './fwmark-range.js';

function range(text: string): ReturnType<typeof parseFwmarkRange> & { ok: true } {
  const parsed = parseFwmarkRange(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return parsed;
}

test('fwmark range: VALUE/MASK and FIRST-LAST, hex or decimal', () => {
  const def = range(DEFAULT_FWMARK_RANGE).value;
  assert.deepEqual([def.first, def.last], [0x0c000000, 0x0cffffff]);
  assert.equal(inRange(def, 0x4000), false, 'kube-proxy masq mark is not ours');
  assert.equal(inRange(def, (0x3fff | 1 << 18) >>> 0), false, 'kube-router DSR marks are not ours');
  assert.deepEqual([range('100-200').value.first, range('100-200').value.last], [100, 200]);
  assert.deepEqual([range('0x10-0x1f').value.first, range('0x10-0x1f').value.last], [16, 31]);
  assert.deepEqual([range('0/0xffffff00').value.first, range('0/0xffffff00').value.last], [1, 255], 'mark 0 is never used');
  assert.equal(formatMark(0x0c000001), '0x0c000001');
});

test('fwmark range: bad input gets a clear reason', () => {
  for (const [text, why] of [
    ['', /VALUE\/MASK/], ['0x0c000000', /VALUE\/MASK/], ['0x1/0x0', /zero mask/], ['0x0c000001/0xff000000', /bits outside mask/],
    ['0/0xff00ff00', /low bits/], ['0-10', /mark 0/], ['20-10', /below first/], ['x-y', /32-bit/], ['0x1ffffffff/0xff000000', /32-bit/],
  ] as const) {
    const parsed = parseFwmarkRange(text);
    assert.equal(parsed.ok, false, text);
    if (!parsed.ok) assert.match(parsed.error, why, text);
  }
});

test('allocateMarks: keeps current marks, skips foreign ones, lowest free first, reports exhaustion', () => {
  const r = range('10-13').value;
  const { marks, exhausted } = allocateMarks(r, ['c', 'a', 'b', 'd'], new Map([['b', 12]]), new Set([10]));
  assert.deepEqual(Object.fromEntries(marks), { a: 11, b: 12, c: 13 });
  assert.deepEqual(exhausted, ['d']);
  const again = allocateMarks(r, ['b'], new Map([['b', 99]]), new Set());
  assert.equal(again.marks.get('b'), 10, 'a current mark outside the range is not kept');
});
