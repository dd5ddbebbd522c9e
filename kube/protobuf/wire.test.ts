import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtoReader, ProtobufError } from './wire.js';

test('varints, strings, nested messages and skipped fields of every wire type', () => {
  // field 1 varint 300; field 2 "hi"; field 3 fixed64; field 4 fixed32; field 5 message {1: 7}; field 6 int32 -1 (10 bytes)
  const bytes = Buffer.from([0x08, 0xac, 0x02, 0x12, 0x02, 0x68, 0x69, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4, 0x2a, 0x02, 0x08, 0x07,
    0x30, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  const r = new ProtoReader(bytes);
  const seen: unknown[] = [];
  while (r.next()) {
    if (r.field === 1) seen.push(r.varint());
    else if (r.field === 2) seen.push(r.string());
    else if (r.field === 5) {
      const m = r.message();
      assert.ok(m.next());
      seen.push(['inner', m.field, m.varint()]);
      assert.equal(m.next(), false);
    } else if (r.field === 6) seen.push(r.int32());
    else r.skip();
  }
  assert.deepEqual(seen, [300, 'hi', ['inner', 1, 7], -1]);
});

test('truncated or malformed input is a ProtobufError, never a read past the range', () => {
  const cases: Array<[string, number[], (r: ProtoReader) => void]> = [
    ['truncated varint', [0x08, 0x80], (r) => r.varint()],
    ['length past the end', [0x12, 0x05, 0x61], (r) => r.string()],
    ['fixed64 cut', [0x19, 1, 2], (r) => r.skip()],
    ['unknown wire type', [0x0b], (r) => r.skip()],
    ['wrong wire type', [0x08, 0x01], (r) => r.string()],
    ['varint of 11 bytes', [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], (r) => r.varint()],
  ];
  for (const [what, bytes, read] of cases) {
    const r = new ProtoReader(Buffer.from(bytes));
    assert.throws(() => {
      while (r.next()) read(r);
    }, ProtobufError, what);
  }
  assert.throws(() => new ProtoReader(Buffer.from([0x00])).next(), /field number 0/);
  // A range inside a larger buffer ends at its end.
  const outer = Buffer.from([0x12, 0x02, 0x08, 0x01, 0x08, 0x02]);
  const m = new ProtoReader(outer);
  assert.ok(m.next());
  const inner = m.message();
  assert.ok(inner.next());
  assert.equal(inner.varint(), 1);
  assert.equal(inner.next(), false);
});

test('takeSpan moves past a length-delimited field and gives its start, and spanEnd its end', () => {
  // field 2 "abc"; field 3 message {}; field 4 "z", after a 2-byte prefix of something else
  const bytes = Buffer.from([0xee, 0xee, 0x12, 0x03, 0x61, 0x62, 0x63, 0x1a, 0x00, 0x22, 0x01, 0x7a]);
  const r = new ProtoReader(bytes, 2);
  const taken: Array<[number, number]> = [];
  while (r.next()) taken.push([r.takeSpan(), r.spanEnd]);
  assert.deepEqual(taken, [[4, 7], [9, 9], [11, 12]]);
  assert.throws(() => {
    const t = new ProtoReader(Buffer.from([0x12, 0x05, 0x61]));
    t.next();
    t.takeSpan();
  }, /past the end/);
});
