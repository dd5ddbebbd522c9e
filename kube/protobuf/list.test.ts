/**
 * The protobuf list decoder against the stand-in's encoder (written from the Go marshalers):
 * the items the eager decoder reads, the list's metadata, whatever the chunking; digests equal
 * to the watch's for the same object; and a clear error for every way a body can be wrong.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeEndpointSlice, encodeList, envelope, Message, watchFrame } from '../../test/apiserver/protobuf.js';
import type { JsonObject } from '../../test/apiserver/server.js';
import { readEndpointSlice } from './endpointslice.js';
import type { LazyEndpointSlice } from './lazy-endpointslice.js';
import { ProtobufListDecoder } from './list.js';
import { readWatchEvent } from './watch-event.js';
import { ProtobufError } from './wire.js';

function slice(name: string, pods: number, ready = true): JsonObject {
  return {
    kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1',
    metadata: { name, namespace: 'shop', resourceVersion: '7', labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: pods }, (_, i) => ({
      addresses: [`10.1.0.${i + 1}`], conditions: { ready, serving: ready, terminating: false }, nodeName: `n${i % 3}`,
      targetRef: { kind: 'Pod', namespace: 'shop', name: `${name}-${i}`, uid: `uid-${name}-${i}` },
    })),
  };
}

const LIST_VERSION = 'discovery.k8s.io/v1';

function body(slices: JsonObject[], metadata: Record<string, string> = { resourceVersion: '42' }): Buffer {
  return encodeList(LIST_VERSION, 'EndpointSliceList', metadata, slices.map(encodeEndpointSlice));
}

function decode(chunks: Buffer[], maxItemBytes?: number): { items: LazyEndpointSlice[]; metadata: ReturnType<ProtobufListDecoder['end']> } {
  const items: LazyEndpointSlice[] = [];
  const d = new ProtobufListDecoder((item) => items.push(item), maxItemBytes);
  for (const c of chunks) d.write(c);
  return { items, metadata: d.end() };
}

/** What a decoded item reads as, compared through JSON (LazyEndpointSlice serializes as the API shows it). */
const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

test('a protobuf list: its items as the eager decoder reads them, and its metadata', () => {
  const slices = [slice('web', 3), slice('api', 0), slice('db', 75)];
  const { items, metadata } = decode([body(slices, { resourceVersion: '42', continue: 'tok' })]);
  assert.deepEqual(metadata, { resourceVersion: '42', continue: 'tok' });
  assert.equal(items.length, 3);
  slices.forEach((s, i) => {
    const message = encodeEndpointSlice(s);
    assert.deepEqual(asJson(items[i]), asJson(readEndpointSlice(message, 0, message.length)));
  });
  assert.equal(items[2]?.encoded.size, 75, 'endpoints left encoded');
});

test('an empty list, and a last page (its continue token empty: none)', () => {
  const { items, metadata } = decode([body([], { resourceVersion: '9', continue: '' })]);
  assert.deepEqual(items, []);
  assert.deepEqual(metadata, { resourceVersion: '9' });
});

test('property: any chunking of the body decodes the same', () => {
  const whole = body([slice('web', 2), slice('api', 4, false)], { resourceVersion: '5', continue: 'c' });
  const expected = decode([whole]);
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 12 }), (cuts) => {
    const at = [0, ...cuts.sort((a, b) => a - b), whole.length];
    const chunks = at.slice(1).map((end, k) => whole.subarray(at[k], end));
    const got = decode(chunks);
    assert.deepEqual(asJson(got.items), asJson(expected.items));
    assert.deepEqual(got.metadata, expected.metadata);
  }));
  // And one byte at a time (every header split at every byte).
  const bytes = [...whole].map((b) => Buffer.from([b]));
  assert.deepEqual(asJson(decode(bytes).items), asJson(expected.items));
});

test('a listed slice carries the digests its watch event carries for the same bytes', () => {
  const s = slice('web', 5);
  const listed = decode([body([s])]).items[0];
  const frame = watchFrame('MODIFIED', envelope(LIST_VERSION, 'EndpointSlice', encodeEndpointSlice(s)));
  const watched = readWatchEvent(frame.subarray(4)).object as LazyEndpointSlice;
  assert.deepEqual([...(listed?.encoded.digests ?? [])], [...watched.encoded.digests]);
});

test('items are their own bytes: the chunks they came in may be reused', () => {
  const whole = body([slice('web', 3), slice('api', 2)]);
  const chunks = [Buffer.from(whole.subarray(0, 100)), Buffer.from(whole.subarray(100))];
  const { items } = decode(chunks);
  const before = asJson(items);
  for (const c of chunks) c.fill(0);
  assert.deepEqual(asJson(items), before);
});

test('a list of another kind, a compressed raw, or no k8s prefix: a ProtobufError', () => {
  const podList = encodeList('v1', 'PodList', { resourceVersion: '1' }, []);
  assert.throws(() => decode([podList]), (e: unknown) => e instanceof ProtobufError && /kind PodList/.test(e.message));
  const raw = new Message().message(1, new Message().string(2, '1')).finish();
  const compressed = Buffer.concat([Buffer.from('k8s\0'), new Message()
    .message(1, new Message().string(1, LIST_VERSION).string(2, 'EndpointSliceList'))
    .bytes(2, raw).string(3, 'gzip').string(4, '').finish()]);
  assert.throws(() => decode([compressed]), (e: unknown) => e instanceof ProtobufError && /content encoding gzip/.test(e.message));
  assert.throws(() => decode([Buffer.from('{"kind":"EndpointSliceList"}')]), ProtobufError);
  const noKind = Buffer.concat([Buffer.from('k8s\0'), new Message().bytes(2, raw).finish()]);
  assert.throws(() => decode([noKind]), /before its kind/);
});

test('a body cut inside the list is refused at its end, never taken as a shorter list', () => {
  const whole = body([slice('web', 2), slice('api', 1)]);
  // After the list message come Unknown's two empty strings (contentEncoding, contentType: 2
  // bytes each). A cut between fields there loses no data (they are optional); one inside a
  // field's header is refused.
  const listEnd = whole.length - 4;
  const cutAt = (cut: number): (() => unknown) => () => {
    const d = new ProtobufListDecoder(() => undefined);
    d.write(whole.subarray(0, cut));
    return d.end();
  };
  for (let cut = 0; cut < listEnd; cut++) assert.throws(cutAt(cut), ProtobufError, `cut at ${cut}`);
  assert.throws(cutAt(listEnd + 1), ProtobufError);
  assert.throws(cutAt(listEnd + 3), ProtobufError);
  assert.deepEqual(cutAt(listEnd)(), { resourceVersion: '42' });
});

test('an item larger than the bound is an error, before its bytes are gathered', () => {
  const whole = body([slice('web', 40)]);
  const d = new ProtobufListDecoder(() => assert.fail('no item handed out'), 1024);
  assert.throws(() => d.write(whole.subarray(0, 200)), /one item is larger than 1024 bytes/);
});

test('an item whose length runs past the list message is refused', () => {
  const item = encodeEndpointSlice(slice('web', 1));
  // A list message that says it is shorter than the item it holds.
  const list = new Message().bytes(2, item).finish();
  const short = Buffer.concat([Buffer.from('k8s\0'), new Message()
    .message(1, new Message().string(1, LIST_VERSION).string(2, 'EndpointSliceList')).finish(),
    Buffer.from([0x12, 10]), list.subarray(0, 10)]);
  assert.throws(() => decode([short]), /past the end of the list message/);
});

test('an empty item last in the list is an item, not the end of the list', () => {
  const list = new Message().message(1, new Message().string(2, '3')).bytes(2, encodeEndpointSlice(slice('web', 1))).bytes(2, Buffer.alloc(0)).finish();
  const whole = envelope(LIST_VERSION, 'EndpointSliceList', list);
  const { items, metadata } = decode([whole]);
  assert.equal(items.length, 2);
  assert.equal(items[1]?.encoded.size, 0);
  assert.deepEqual(metadata, { resourceVersion: '3' });
});
