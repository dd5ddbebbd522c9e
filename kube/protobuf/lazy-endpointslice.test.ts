/**
 * The slice watch's lazy slices (LazyEndpointSlice) against the eager decoder: the same
 * endpoints, decoded one by one or all at once, from bytes of their own (the frame they came in
 * is the watch's to reuse); digests that follow an endpoint's bytes, not the slice around it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeEndpointSlice } from '../../test/apiserver/protobuf.js';
import type { JsonObject } from '../../test/apiserver/server.js';
import { readEndpointSlice } from './endpointslice.js';
import { readLazyEndpointSlice } from './lazy-endpointslice.js';

const endpointArb = fc.record({
  addresses: fc.array(fc.ipV4(), { minLength: 1, maxLength: 2 }),
  conditions: fc.record({ ready: fc.boolean(), serving: fc.boolean(), terminating: fc.boolean() }),
  nodeName: fc.string({ minLength: 1, maxLength: 12 }),
  targetRef: fc.record({ kind: fc.constant('Pod'), namespace: fc.string({ minLength: 1, maxLength: 10 }), name: fc.string({ minLength: 1, maxLength: 20 }), uid: fc.uuid() }),
});

function slice(name: string, endpoints: unknown[]): JsonObject {
  return {
    kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1',
    metadata: { name, namespace: 'shop', resourceVersion: String(name.length), labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints,
  };
}

test('property: a lazy slice decodes to what the eager decoder reads, after its frame is overwritten', () => {
  fc.assert(fc.property(fc.array(endpointArb, { maxLength: 6 }), (endpoints) => {
    const frame = encodeEndpointSlice(slice('web-abc', endpoints));
    const eager = readEndpointSlice(frame, 0, frame.length);
    const lazy = readLazyEndpointSlice(frame, 0, frame.length);
    frame.fill(0xff);
    assert.equal(lazy.encoded.size, endpoints.length);
    for (let i = 0; i < lazy.encoded.size; i++) assert.deepEqual(lazy.encoded.decode(i), eager.endpoints?.[i]);
    assert.deepEqual(JSON.parse(JSON.stringify(lazy)), JSON.parse(JSON.stringify(eager)));
    assert.deepEqual(lazy.endpoints, eager.endpoints);
  }), { numRuns: 200 });
});

test('property: an endpoint digests alike in any slice at any place; a flipped one digests apart', () => {
  fc.assert(fc.property(fc.array(endpointArb, { minLength: 1, maxLength: 6 }), fc.nat(), (endpoints, n) => {
    const at = n % endpoints.length;
    const flipped = endpoints.map((e, i) => (i === at ? { ...e, conditions: { ...e.conditions, serving: !e.conditions.serving } } : e));
    const aFrame = encodeEndpointSlice(slice('web-abc', endpoints));
    const a = readLazyEndpointSlice(aFrame, 0, aFrame.length);
    const bFrame = encodeEndpointSlice(slice('web-other-name', [...flipped].reverse()));
    const b = readLazyEndpointSlice(bFrame, 0, bFrame.length);
    const digest = (s: typeof a, i: number): string => `${s.encoded.digests[2 * i]}/${s.encoded.digests[2 * i + 1]}`;
    for (let i = 0; i < endpoints.length; i++) {
      const j = endpoints.length - 1 - i;
      if (i === at) assert.notEqual(digest(a, i), digest(b, j));
      else assert.equal(digest(a, i), digest(b, j));
    }
  }), { numRuns: 200 });
});

test('a slice without endpoints has none to decode, as JSON leaves them out', () => {
  const frame = encodeEndpointSlice(slice('empty', []));
  const lazy = readLazyEndpointSlice(frame, 0, frame.length);
  assert.equal(lazy.encoded.size, 0);
  assert.equal(lazy.endpoints, undefined);
  assert.equal('endpoints' in JSON.parse(JSON.stringify(lazy)), false);
});
