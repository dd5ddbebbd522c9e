import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeSliceDocument } from './slice-bytes.js';
import { EndpointIndex } from './endpoint-index.js';
import { viewSlice, type RawSlice } from './slice-view.js';

const utf8 = new TextEncoder();
const text = new TextDecoder();

const endpointArb = fc.record({
  addresses: fc.array(fc.oneof(fc.ipV4(), fc.string({ maxLength: 4 })), { maxLength: 2 }),
  conditions: fc.record({ ready: fc.boolean(), serving: fc.boolean(), terminating: fc.boolean() }, { requiredKeys: [] }),
  nodeName: fc.string({ maxLength: 8 }),
  targetRef: fc.record({ kind: fc.constant('Pod'), name: fc.string({ maxLength: 8 }), namespace: fc.string({ maxLength: 4 }), uid: fc.uuid() }),
  zone: fc.string({ maxLength: 3 }),
}, { requiredKeys: ['addresses'] });
const sliceArb = fc.record({
  kind: fc.constant('EndpointSlice'),
  metadata: fc.record({ name: fc.string({ maxLength: 8 }), namespace: fc.string({ maxLength: 6 }), resourceVersion: fc.nat().map(String), labels: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }) }),
  addressType: fc.constantFrom('IPv4', 'IPv6'),
  endpoints: fc.array(endpointArb, { maxLength: 6 }),
  ports: fc.array(fc.record({ port: fc.nat(65535), protocol: fc.constantFrom('TCP', 'UDP') }), { maxLength: 2 }),
});

/** What the agent reads of a slice: its view's fields and endpoints, materialized. */
function read(raw: RawSlice): unknown {
  const v = viewSlice(raw);
  return { key: v.key, service: v.service, ports: v.ports, flowPinningOff: v.flowPinningOff, endpoints: v.endpoints };
}

/** The slice without its endpoints (what the decoded object carries as fields). */
function head(slice: Record<string, unknown>): Record<string, unknown> {
  const { endpoints: _, ...rest } = slice;
  return rest;
}

test('decodeSliceDocument: the slice JSON.parse gives, its endpoints as its view, as an item and as a watch line; nothing of the bytes kept', () => {
  fc.assert(fc.property(sliceArb.map((s) => JSON.parse(JSON.stringify(s)) as typeof s & Record<string, unknown>), fc.nat(2), (slice, indent) => {
    const item = decodeSliceDocument(utf8.encode(JSON.stringify(slice, null, indent)), 1) as RawSlice & Record<string, unknown>;
    assert.deepEqual({ ...item }, head(slice));
    assert.deepEqual(read(item), read(slice));
    assert.throws(() => item.endpoints, /decoded to its view/);
    const line = utf8.encode(JSON.stringify({ type: 'MODIFIED', object: slice }));
    const event = decodeSliceDocument(line, 2) as { type: string; object: RawSlice & Record<string, unknown> };
    line.fill(0); // the watch's line buffer is reused for the next line
    assert.equal(event.type, 'MODIFIED');
    assert.deepEqual({ ...event.object }, head(slice));
    assert.deepEqual(read(event.object), read(slice));
  }), { numRuns: 200 });
});

test('decodeSliceDocument refuses what JSON.parse refuses (any byte of a slice broken), else reads what it reads', () => {
  fc.assert(fc.property(sliceArb, fc.nat(), fc.constantFrom(0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x61), (slice, at, byte) => {
    const bytes = utf8.encode(JSON.stringify({ type: 'MODIFIED', object: slice }));
    bytes[at % bytes.length] = byte;
    let reference: { type?: unknown; object?: RawSlice } | null;
    try {
      reference = JSON.parse(text.decode(bytes)) as typeof reference;
    } catch {
      assert.throws(() => decodeSliceDocument(bytes, 2));
      return;
    }
    const object = reference?.object;
    if (object === null || typeof object !== 'object' || !Array.isArray(object.endpoints)) {
      assert.deepEqual(decodeSliceDocument(bytes, 2), reference, 'not a slice with endpoints: parsed whole');
      return;
    }
    let expected: unknown;
    try {
      expected = read(object);
    } catch {
      assert.throws(() => read((decodeSliceDocument(bytes, 2) as { object: RawSlice }).object), 'an endpoint the view cannot read fails it either way');
      return;
    }
    assert.deepEqual(read((decodeSliceDocument(bytes, 2) as { object: RawSlice }).object), expected);
  }), { numRuns: 500 });
});

test('a readiness flip of a 100-endpoint slice decoded from bytes parses the one endpoint that changed', () => {
  const endpoints = (flip: number): unknown[] => Array.from({ length: 100 }, (_, i) => ({
    addresses: [`10.7.0.${i}`], conditions: { ready: i !== flip, serving: i !== flip, terminating: false }, nodeName: `node-${i}`,
    targetRef: { kind: 'Pod', namespace: 'shop', name: `web-${i}`, uid: `0f8e9c1a-1111-4b6d-9a51-7c2e3f4d${String(1000 + i).padStart(4, '0')}` },
  }));
  const line = (flip: number, rv: number): Uint8Array => utf8.encode(JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'web-a', namespace: 'shop', resourceVersion: String(rv), labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', endpoints: endpoints(flip), ports: [{ port: 8080, protocol: 'TCP' }] } }));
  const index = new EndpointIndex(() => true);
  const decode = (bytes: Uint8Array): ReturnType<typeof viewSlice> => viewSlice((decodeSliceDocument(bytes, 2, (key) => index.keptEndpoints(key)) as { object: RawSlice }).object);
  index.upsert(decode(line(-1, 1)));
  const flipped = decode(line(42, 2));
  const parsed = Array.from({ length: flipped.size }, (_, i) => i).filter((i) => flipped.keptAt(i) < 0);
  assert.deepEqual(parsed, [42]);
  assert.deepEqual([...index.changedBy(flipped)], ['0f8e9c1a-1111-4b6d-9a51-7c2e3f4d1042']);
  assert.deepEqual([...index.upsert(flipped)], ['0f8e9c1a-1111-4b6d-9a51-7c2e3f4d1042']);
  assert.equal(index.isDraining('0f8e9c1a-1111-4b6d-9a51-7c2e3f4d1042'), true);
  // Back to serving: the flipped endpoint's new bytes are the ones of the first state, which the index no longer has.
  const back = decode(line(-1, 3));
  assert.deepEqual(Array.from({ length: back.size }, (_, i) => i).filter((i) => back.keptAt(i) < 0), [42]);
  assert.deepEqual([...index.upsert(back)], ['0f8e9c1a-1111-4b6d-9a51-7c2e3f4d1042']);
  // A view is valid only against the state it was built for.
  const stale = decode(line(7, 4));
  index.upsert(decode(line(8, 5)));
  assert.throws(() => index.upsert(stale), /another state of the index/);
});
