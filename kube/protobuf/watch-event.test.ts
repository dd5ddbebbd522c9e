/**
 * The agent's protobuf decoding against the stand-in's encoder (test/apiserver/protobuf.ts,
 * itself checked against the official .proto files compiled by protoc, bench/slice-bytes):
 * random EndpointSlices, framed as an API server frames a watch, cut into random chunks,
 * decode to what the agent reads of the same slice as JSON (viewSlice); ERROR events to their
 * Status; bookmarks to their metadata; anything else is a ProtobufError.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeEndpointSlice, encodeStatus, envelope, watchFrame } from '../../test/apiserver/protobuf.js';
import type { JsonObject } from '../../test/apiserver/server.js';
import { viewSlice, type RawSlice } from '../../src/endpoints/slice-view.js';
import { FrameSplitter } from './frames.js';
import { readWatchEvent, type DecodedWatchEvent } from './watch-event.js';
import { ProtobufError } from './wire.js';

const text = fc.string({ maxLength: 12 });
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined });
const endpointArb = fc.record({
  addresses: fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 2 }),
  conditions: fc.record({ ready: maybe(fc.boolean()), serving: maybe(fc.boolean()), terminating: maybe(fc.boolean()) }),
  nodeName: maybe(fc.string({ minLength: 1, maxLength: 12 })),
  zone: maybe(text),
  hostname: maybe(text),
  targetRef: maybe(fc.record({ kind: fc.constant('Pod'), namespace: fc.string({ minLength: 1, maxLength: 10 }), name: fc.string({ minLength: 1, maxLength: 20 }), uid: fc.uuid() })),
});
const sliceArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 20 }),
  namespace: fc.string({ minLength: 1, maxLength: 10 }),
  rv: fc.nat().map(String),
  labels: fc.dictionary(fc.constantFrom('kubernetes.io/service-name', 'conndrain.io/hold', 'conndrain.io/flow-pinning', 'app'), fc.constantFrom('web', 'disabled', 'off', 'x')),
  annotations: fc.dictionary(text, text, { maxKeys: 2 }),
  addressType: fc.constantFrom('IPv4', 'IPv6'),
  ports: fc.array(fc.record({ name: text, port: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP', 'SCTP') }), { maxLength: 3 }),
  endpoints: fc.array(endpointArb, { maxLength: 8 }),
  deleting: fc.boolean(),
});
type SliceSpec = typeof sliceArb extends fc.Arbitrary<infer T> ? T : never;

/** The slice as the JSON API shows it (undefined fields left out, as JSON.parse would give them). */
function json(s: SliceSpec): JsonObject {
  const clean = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return {
    kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1',
    metadata: { name: s.name, namespace: s.namespace, uid: '6f9619ff-8b86-d011-b42d-00cf4fc964ff', resourceVersion: s.rv, creationTimestamp: '2026-12-06T10:00:00Z', labels: { ...s.labels }, annotations: { ...s.annotations }, ...(s.deleting ? { deletionTimestamp: '2026-12-06T10:00:05Z' } : {}) },
    addressType: s.addressType,
    ports: s.ports,
    endpoints: s.endpoints.map((e) => clean({ ...e, conditions: clean(e.conditions), targetRef: e.targetRef })),
  };
}

function decodeAll(frames: Buffer[], cuts: number[]): DecodedWatchEvent[] {
  const out: DecodedWatchEvent[] = [];
  const splitter = new FrameSplitter((f) => out.push(readWatchEvent(f)), 1 << 20);
  const bytes = Buffer.concat(frames);
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const step = cuts[k % cuts.length] as number;
    splitter.write(bytes.subarray(i, i + step));
    i += step;
  }
  return out;
}

function viewed(raw: unknown): unknown {
  const v = viewSlice(raw as RawSlice);
  return { key: v.key, service: v.service, ports: v.ports, pin: v.flowPinningOff, hold: v.holdDisabled, endpoints: v.endpoints, flags: Array.from({ length: v.size }, (_, i) => v.flagsAt(i)), refs: Array.from({ length: v.size }, (_, i) => v.refAt(i)) };
}

test('property: framed slices cut anywhere decode to what the agent reads of their JSON', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), sliceArb), { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 6 }), (events, cuts) => {
    const objects = events.map(([, s]) => json(s));
    const frames = events.map(([type], i) => watchFrame(type, envelope('discovery.k8s.io/v1', 'EndpointSlice', encodeEndpointSlice(objects[i] as JsonObject))));
    const decoded = decodeAll(frames, cuts);
    assert.equal(decoded.length, events.length);
    decoded.forEach((d, i) => {
      const want = objects[i] as { metadata: Record<string, unknown> };
      assert.equal(d.type, events[i]?.[0]);
      const got = d.object as { kind: string; metadata: Record<string, unknown>; addressType: string };
      assert.equal(got.kind, 'EndpointSlice');
      assert.equal(got.metadata.resourceVersion, want.metadata.resourceVersion);
      assert.deepEqual(got.metadata.labels ?? {}, want.metadata.labels);
      assert.deepEqual(got.metadata.annotations ?? {}, want.metadata.annotations);
      assert.equal(got.metadata.deletionTimestamp, want.metadata.deletionTimestamp);
      assert.deepEqual(viewed(d.object), viewed(want));
    });
  }), { numRuns: 300 });
});

test('an ERROR event decodes to its Status; a bookmark to its metadata', () => {
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 5 (9)', reason: 'Expired', code: 410 } as unknown as JsonObject;
  const bookmark = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } } } as unknown as JsonObject;
  const [error, mark] = decodeAll([
    watchFrame('ERROR', envelope('v1', 'Status', encodeStatus(status))),
    watchFrame('BOOKMARK', envelope('discovery.k8s.io/v1', 'EndpointSlice', encodeEndpointSlice(bookmark))),
  ], [5]);
  assert.deepEqual(error, { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 5 (9)', reason: 'Expired', code: 410 } });
  assert.equal(mark?.type, 'BOOKMARK');
  assert.deepEqual((mark?.object as { metadata: unknown }).metadata, { resourceVersion: '77', annotations: { 'k8s.io/initial-events-end': 'true' } });
});

test('a kind not decoded here, an object without the k8s prefix, a broken or cut frame: a ProtobufError', () => {
  const slice = encodeEndpointSlice({ metadata: { name: 's', namespace: 'n', resourceVersion: '1' }, addressType: 'IPv4', endpoints: [], ports: [] });
  const good = watchFrame('MODIFIED', envelope('discovery.k8s.io/v1', 'EndpointSlice', slice)).subarray(4);
  const cases: Array<[string, Buffer]> = [
    ['another kind', watchFrame('MODIFIED', envelope('v1', 'Pod', slice)).subarray(4)],
    ['no prefix', Buffer.from(good.toString('latin1').replace('k8s\0', 'k9s\0'), 'latin1')],
    ['cut', good.subarray(0, good.length - 3)],
    ['garbage', Buffer.from([0xff, 0xff, 0xff])],
  ];
  for (const [what, frame] of cases) assert.throws(() => readWatchEvent(frame), ProtobufError, what);
});
