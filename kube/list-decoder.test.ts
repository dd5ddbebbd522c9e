import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ListDecoder } from './list-decoder.js';

function decode(text: string, cuts: number[]): { items: unknown[]; metadata: unknown } {
  const items: unknown[] = [];
  const d = new ListDecoder((item) => items.push(item));
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    d.write(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  d.write(bytes.subarray(at));
  return { items, metadata: d.end() };
}

const jsonValue = fc.jsonValue({ maxDepth: 4 });
const item = fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 5 });

test('list decoder: every item and the metadata, whatever the chunking, escapes and nesting', () => {
  fc.assert(
    fc.property(
      fc.array(item, { maxLength: 8 }),
      fc.string({ maxLength: 6 }),
      fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.boolean(),
      (items, rv, cont, cuts, itemsFirst) => {
        const metadata = { resourceVersion: rv, ...(cont === undefined ? {} : { continue: cont }), remainingItemCount: 3 };
        const body = itemsFirst
          ? { items, kind: 'PodList', apiVersion: 'v1', metadata, extra: { items: [1, 2], metadata: 'x' } }
          : { kind: 'PodList', apiVersion: 'v1', metadata, extra: { items: [1, 2], metadata: 'x' }, items };
        const text = JSON.stringify(body, null, cuts.length % 2 === 0 ? undefined : 1);
        const out = decode(text, cuts);
        assert.deepEqual(out.items, JSON.parse(JSON.stringify(items)));
        assert.deepEqual(out.metadata, { resourceVersion: rv, ...(cont === undefined || cont === '' ? {} : { continue: cont }) });
      },
    ),
    { numRuns: 400 },
  );
});

test('list decoder: backslashes before a quote across a chunk boundary', () => {
  const items = [{ a: 'x\\\\', b: 'say \\"hi\\"' }, { c: '\\' }];
  const text = JSON.stringify({ metadata: { resourceVersion: '7' }, items });
  for (let cut = 0; cut <= text.length; cut++) assert.deepEqual(decode(text, [cut, cut + 1]).items, items);
});

test('list decoder: truncated or non-object bodies are errors, an oversized item is bounded', () => {
  assert.throws(() => decode('{"items":[{"a":1}', []), /truncated/);
  assert.throws(() => decode('[1,2]', []), /not a JSON object/);
  const d = new ListDecoder(() => undefined, 100);
  assert.throws(() => {
    d.write(Buffer.from(`{"items":[{"a":"${'x'.repeat(60)}`));
    d.write(Buffer.from(`${'x'.repeat(60)}"}]}`));
  }, /larger than 100 bytes/);
});
