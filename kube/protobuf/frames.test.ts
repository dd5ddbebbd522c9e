import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FrameSplitter } from './frames.js';

function framed(payloads: Buffer[]): Buffer {
  return Buffer.concat(payloads.flatMap((p) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(p.length);
    return [head, p];
  }));
}

test('property: frames cut anywhere across chunks come out whole and in order (empty frames too)', () => {
  fc.assert(fc.property(
    fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }),
    fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 10 }),
    (payloads, steps) => {
      const bytes = framed(payloads.map((p) => Buffer.from(p)));
      const out: string[] = [];
      const s = new FrameSplitter((f) => out.push(f.toString('hex')), 1000);
      for (let i = 0, k = 0; i < bytes.length; k++) {
        const step = steps[k % steps.length] as number;
        s.write(bytes.subarray(i, i + step));
        i += step;
      }
      assert.deepEqual(out, payloads.map((p) => Buffer.from(p).toString('hex')));
    },
  ), { numRuns: 300 });
});

test('a frame larger than the bound is an error, whether its header arrives whole or split', () => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(2_000);
  assert.throws(() => new FrameSplitter(() => undefined, 1000).write(head), /larger than 1000 bytes/);
  const s = new FrameSplitter(() => undefined, 1000);
  s.write(head.subarray(0, 3));
  assert.throws(() => s.write(head.subarray(3)), /larger than 1000 bytes/);
});
