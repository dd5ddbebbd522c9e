import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { digestBytes, splitArray } from './json-array-split.js';

const utf8 = new TextEncoder();
const text = new TextDecoder();
const KEY = utf8.encode('endpoints');

/** JSON text of `value` with random whitespace between tokens (JSON.stringify's, then spaces after commas and colons outside strings). */
function spaced(value: unknown, indent: number): string {
  return JSON.stringify(value, null, indent);
}

const element = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

test('splitArray: the head with the array emptied and each element parse to the whole document (any JSON around it, any indent, watch line or item)', () => {
  fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => k !== 'endpoints'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.array(element, { maxLength: 6 }), fc.nat(2), fc.boolean(), (rest, elements, indent, asEvent) => {
    const object = { ...rest, endpoints: elements };
    const doc = asEvent ? { type: 'MODIFIED', object } : object;
    const bytes = utf8.encode(spaced(doc, indent));
    const split = splitArray(bytes, KEY, asEvent ? 2 : 1);
    if (Object.keys(rest).some((k) => JSON.stringify(k) !== `"${k}"`)) {
      assert.equal(split, undefined, 'a key with escapes beside the array: parsed whole');
      return;
    }
    assert.ok(split !== undefined);
    const head = JSON.parse(text.decode(bytes.subarray(0, split.open + 1)) + text.decode(bytes.subarray(split.close - 1))) as { object?: Record<string, unknown> } & Record<string, unknown>;
    const got = (asEvent ? head.object : head) as Record<string, unknown>;
    assert.deepEqual(got.endpoints, []);
    got.endpoints = Array.from({ length: split.count }, (_, i) => JSON.parse(text.decode(bytes.subarray(split.spans[2 * i], split.spans[2 * i + 1]))) as unknown);
    assert.deepEqual(head, JSON.parse(text.decode(bytes)));
  }), { numRuns: 300 });
});

test('splitArray: equal element bytes have equal digests wherever they sit; a one-byte change changes it', () => {
  fc.assert(fc.property(fc.array(element, { minLength: 1, maxLength: 5 }), fc.string({ maxLength: 30 }), (elements, pad) => {
    const a = utf8.encode(JSON.stringify({ endpoints: elements }));
    const b = utf8.encode(JSON.stringify({ p: pad, endpoints: [{ x: 1 }, ...elements] }));
    const copy = (s: ReturnType<typeof splitArray>): { spans: Int32Array; digests: Int32Array } | undefined => (s === undefined ? undefined : { spans: s.spans.slice(0, 2 * s.count), digests: s.digests.slice(0, 2 * s.count) });
    const sa = copy(splitArray(a, KEY, 1));
    const sb = copy(splitArray(b, KEY, 1));
    assert.ok(sa !== undefined && sb !== undefined);
    for (let i = 0; i < elements.length; i++) {
      assert.equal(sa.digests[2 * i], sb.digests[2 * i + 2]);
      assert.equal(sa.digests[2 * i + 1], sb.digests[2 * i + 3]);
      assert.ok(sa.digests[2 * i] !== 0 || sa.digests[2 * i + 1] !== 0);
    }
    const first = a.slice(sa.spans[0], sa.spans[1]);
    const [x, y] = digestBytes(first, 0, first.length);
    assert.deepEqual([x, y], [sa.digests[0], sa.digests[1]]);
    first[1] = (first[1] as number) ^ 1;
    assert.notDeepEqual(digestBytes(first, 0, first.length), [x, y]);
  }), { numRuns: 200 });
});

test('splitArray: takes nothing unusual (the document is parsed whole instead)', () => {
  const no = (json: string, depth = 1): void => assert.equal(splitArray(utf8.encode(json), KEY, depth), undefined, json);
  no('{"a":1}', 1);
  no('{"endpoints":[{"a":1}],"endpoints":[]}');
  no('{"endpoints":[{"a":1}],"endpo\\u0069nts":[]}');
  no('{"endpoints":[1,2]}');
  no('{"endpoints":[{"a":1},null]}');
  no('{"endpoints":{"a":1}}');
  no('{"endpoints":[{"a":1}');
  no('{"endpoints":[{"a":"1}]}');
  no('{"endpoints":[{"a":1}}]}');
  no('{"endpoints":[{"a":1} {"b":2}]}');
  no('{"type":"ADDED","object":{"endpoints":[{"a":1}]}}', 1);
  assert.equal(splitArray(utf8.encode('{"endpoints":[]}'), KEY, 1)?.count, 0);
  assert.equal(splitArray(utf8.encode('{"x":{"endpoints":[{"q":1}]},"endpoints":[{"a":"]}\\""}]}'), KEY, 1)?.count, 1, 'a nested key of that name is not the one; brackets and quotes in strings are text');
});
