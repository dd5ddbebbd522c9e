/**
 * EndpointIndex against a plain model: every slice kept as its view, every answer found by a
 * scan of all of them. Random upserts and removals over a small universe of pods, addresses
 * (IPv4, IPv6, several per endpoint, one address for two pods), nodes, ports, namespaces, the
 * Service's opt-out label and conditions, so rows are reused, slot tables rebuilt and pods listed by several slices.
 * Each upsert comes as JSON (every endpoint read) or as from the protobuf watch (endpoints
 * encoded with digests: those the index kept are not decoded), mixed at random as relists and
 * watch events mix them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { EndpointIndex, type MergedEndpoint } from './endpoint-index.js';
import { viewSlice, type EncodedEndpoints, type RawEndpoint, type RawSlice, type SliceView } from './slice-view.js';
import { unpackIpv4 } from '../store/ipv4.js';

const UIDS = ['0f8e9c1a-1111-4b6d-9a51-7c2e3f4d5b6a', '0f8e9c1a-2222-4b6d-9a51-7c2e3f4d5b6a', 'u-text-3', 'u-text-4', '0f8e9c1a-5555-4b6d-9a51-7c2e3f4d5b6a'];
const ADDRESSES = ['10.0.0.1', '10.0.0.2', '10.0.0.3', 'fd00::1', 'fd00::2'];
const KEYS = ['a', 'b', 'c', 'd'];
const NAMESPACES = ['shop', 'lab'];
const OPTED_IN = new Set(['shop']);

const endpointArb = fc.record({
  uid: fc.constantFrom(...UIDS, undefined),
  /** Now and then none: such an endpoint is dropped, and the encoded view's digests must still line up with its rows. */
  addresses: fc.oneof({ arbitrary: fc.array(fc.constantFrom(...ADDRESSES), { minLength: 1, maxLength: 2 }), weight: 6 }, { arbitrary: fc.constant([] as string[]), weight: 1 }),
  /** A pod's node is its own (whichever slice names it); some slices leave it out. */
  withNode: fc.boolean(),
  serving: fc.boolean(),
  terminating: fc.boolean(),
});
const sliceArb = fc.record({
  key: fc.constantFrom(...KEYS),
  namespace: fc.constantFrom(...NAMESPACES),
  service: fc.constantFrom('web', 'api'),
  ports: fc.constantFrom([[8080, 'TCP']] as const, [[53, 'UDP'], [53, 'TCP']] as const, [] as const),
  pinOff: fc.boolean(),
  holdOff: fc.boolean(),
  endpoints: fc.array(endpointArb, { maxLength: 5 }),
});
type SliceSpec = typeof sliceArb extends fc.Arbitrary<infer T> ? T : never;
/** An edit of a kept slice as the controller makes them: a flip, a new address, ports, labels, an endpoint gone, the order. */
const editArb = fc.record({ edit: fc.constantFrom(...KEYS), kind: fc.constantFrom('flip', 'address', 'ports', 'pin', 'hold', 'drop', 'reverse'), n: fc.nat(10) });
type Edit = typeof editArb extends fc.Arbitrary<infer T> ? T : never;

function edited(s: SliceSpec, e: Edit): SliceSpec {
  const endpoints = s.endpoints.map((x) => ({ ...x }));
  const at = endpoints.length === 0 ? -1 : e.n % endpoints.length;
  const one = endpoints[at];
  switch (e.kind) {
    case 'flip': if (one !== undefined) one.serving = !one.serving; break;
    case 'address': if (one !== undefined) one.addresses = [ADDRESSES[e.n % ADDRESSES.length] as string]; break;
    case 'ports': return { ...s, endpoints, ports: s.ports.length === 1 ? [[53, 'UDP'], [53, 'TCP']] : [[8080, 'TCP']] };
    case 'pin': return { ...s, endpoints, pinOff: !s.pinOff };
    case 'hold': return { ...s, endpoints, holdOff: !s.holdOff };
    case 'drop': if (at >= 0) endpoints.splice(at, 1); break;
    default: endpoints.reverse();
  }
  return { ...s, endpoints };
}

function raw(s: SliceSpec): RawSlice {
  return {
    metadata: { name: s.key, namespace: s.namespace, labels: { 'kubernetes.io/service-name': s.service, ...(s.pinOff ? { 'conndrain.io/flow-pinning': 'off' } : {}), ...(s.holdOff ? { 'conndrain.io/hold': 'disabled' } : {}) } },
    ports: s.ports.map(([port, protocol]) => ({ port, protocol })),
    endpoints: s.endpoints.map((e) => ({
      addresses: e.addresses,
      conditions: { serving: e.serving, terminating: e.terminating },
      ...(e.withNode ? { nodeName: `node-${e.uid ?? e.addresses[0] ?? ''}` } : {}),
      ...(e.uid === undefined ? {} : { targetRef: { kind: 'Pod', namespace: s.namespace, name: `pod-${e.uid}`, uid: e.uid } }),
    })),
  };
}

/**
 * `r` as the protobuf watch hands it on: the endpoints encoded, digested (two 32-bit string
 * hashes of the endpoint's JSON: equal digests here are equal endpoints), decoded on demand,
 * every decode counted.
 */
function encodedRaw(r: RawSlice, decodes: { n: number }): RawSlice {
  const endpoints = r.endpoints ?? [];
  const digests = new Uint32Array(2 * endpoints.length);
  endpoints.forEach((e, i) => {
    const text = JSON.stringify(e);
    let h = 0x811c9dc5;
    let l = 0x12345678;
    for (let k = 0; k < text.length; k++) {
      h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
      l = Math.imul(l ^ text.charCodeAt(k), 0x5bd1e995) ^ (l >>> 15);
    }
    digests[2 * i] = h >>> 0;
    digests[2 * i + 1] = l >>> 0;
  });
  const encoded: EncodedEndpoints = {
    size: endpoints.length,
    digests,
    decode(i: number): RawEndpoint {
      decodes.n += 1;
      return endpoints[i] as RawEndpoint;
    },
  };
  return { metadata: r.metadata, ports: r.ports, encoded };
}

/** The model: answers by scanning every kept view. */
class Model {
  readonly slices = new Map<string, SliceView>();
  private *entries(): Generator<[SliceView, number]> {
    for (const s of this.slices.values()) for (let i = 0; i < s.size; i++) yield [s, i];
  }
  uids(): Set<string> {
    return new Set([...this.entries()].map(([s, i]) => s.uidAt(i)));
  }
  merged(uid: string): { addresses: string[]; targets: string[]; draining: boolean; terminating: boolean; flowPinningOff: boolean; nodeName: string | undefined } | undefined {
    const rows = [...this.entries()].filter(([s, i]) => s.uidAt(i) === uid && OPTED_IN.has(s.namespace) && !s.holdDisabled);
    if (rows.length === 0) return undefined;
    const addresses = new Set<string>();
    const targets = new Set<string>();
    for (const [s, i] of rows) for (const a of s.addressesAt(i)) {
      addresses.add(a);
      for (const p of s.ports) targets.add(`${p.protocol}/${a}/${p.port}`);
    }
    return {
      addresses: [...addresses].sort(), targets: [...targets].sort(),
      draining: rows.some(([s, i]) => s.drainingAt(i)), terminating: rows.some(([s, i]) => s.terminatingAt(i)),
      flowPinningOff: rows.some(([s]) => s.flowPinningOff), nodeName: rows.map(([s, i]) => s.nodeAt(i)).find((n) => n !== undefined),
    };
  }
  holders(address: string): string[] {
    return [...new Set([...this.entries()].filter(([s, i]) => s.addressesAt(i).includes(address)).map(([s, i]) => s.uidAt(i)))].sort();
  }
  /** Every target a slice lists, as `address protocol port` ('-' for a slice without ports). */
  targets(): string[] {
    const out = new Set<string>();
    for (const [s, i] of this.entries()) for (const a of s.addressesAt(i)) {
      if (s.ports.length === 0) out.add(`${a} - -`);
      for (const p of s.ports) out.add(`${a} ${p.protocol} ${p.port}`);
    }
    return [...out].sort();
  }
  owns(protocol: string, address: string, port: number): boolean {
    return [...this.entries()].some(([s, i]) => s.addressesAt(i).includes(address) && (s.ports.length === 0 || s.ports.some((p) => p.port === port && p.protocol === protocol)));
  }
}

function shapeOf(m: MergedEndpoint | undefined): ReturnType<Model['merged']> {
  if (m === undefined) return undefined;
  return { addresses: [...m.addresses].sort(), targets: m.targets.map((t) => `${t.protocol}/${t.address}/${t.port}`).sort(), draining: m.draining, terminating: m.terminating, flowPinningOff: m.flowPinningOff, nodeName: m.nodeName };
}

test('EndpointIndex answers as a scan of every slice over random upserts and removals (rows reused, several slices per pod)', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.oneof(sliceArb, editArb, editArb, fc.constantFrom(...KEYS)), fc.boolean()), { maxLength: 40, size: 'max' }), (ops) => {
    const index = new EndpointIndex((ns) => OPTED_IN.has(ns));
    const model = new Model();
    const specs = new Map<string, SliceSpec>();
    const everyUid = [...UIDS, ...ADDRESSES.map((a) => `address/${a}`)];
    const decodes = { n: 0 };
    for (const [o, asProtobuf] of ops) {
      const last = typeof o === 'object' && 'edit' in o ? specs.get(o.edit) : undefined;
      if (typeof o === 'object' && 'edit' in o && last === undefined) continue;
      const op = typeof o === 'object' && 'edit' in o ? edited(last as SliceSpec, o) : o;
      if (typeof op === 'string') specs.delete(op);
      else specs.set(op.key, op);
      const before = new Map(everyUid.map((u) => [u, JSON.stringify(model.merged(u))]));
      let touched = new Set<string>();
      if (typeof op === 'string') {
        const key = `${model.slices.get(op)?.namespace ?? 'none'}/${op}`;
        touched = index.remove(key);
        model.slices.delete(key);
      } else {
        const view = asProtobuf ? viewSlice(encodedRaw(raw(op), decodes), (key) => index.keptEndpoints(key)) : viewSlice(raw(op));
        // A key names one slice: the same name in another namespace is another slice, so drop a namesake first.
        const dropped = new Set<string>();
        for (const k of [...model.slices.keys()]) if (k.endsWith(`/${op.key}`) && k !== view.key) {
          for (const u of index.remove(k)) dropped.add(u);
          model.slices.delete(k);
        }
        const changed = index.changedBy(view);
        touched = index.upsert(view);
        for (const u of touched) assert.ok(changed.has(u), `changedBy missed ${u}`);
        for (const u of dropped) touched.add(u);
        // The model keeps a view of its own: an encoded view answers from the index's rows, which move on.
        model.slices.set(view.key, viewSlice(raw(op)));
      }
      for (const u of everyUid) {
        assert.deepEqual(shapeOf(index.merged(u)), model.merged(u), u);
        if (JSON.stringify(model.merged(u)) !== before.get(u)) assert.ok(touched.has(u), `merged view of ${u} changed untouched`);
        assert.equal(index.isDraining(u), model.merged(u)?.draining ?? false);
        assert.equal(index.isListed(u), model.merged(u) !== undefined);
        assert.equal(index.has(u), model.uids().has(u));
      }
      for (const a of [...ADDRESSES, '10.0.0.9']) {
        assert.deepEqual([...index.holderUids(a)].sort(), model.holders(a), a);
        for (const [protocol, port] of [['tcp', 8080], ['udp', 53], ['tcp', 53], ['udp', 8080]] as const) assert.equal(index.owns(protocol, a, port), model.owns(protocol, a, port), `${protocol}/${a}/${port}`);
      }
      const owned = index.ownedTargets().flatMap((t) => ('address' in t ? [t.address] : [...t.ipv4].map(unpackIpv4)).map((a) => `${a} ${t.protocol ?? '-'} ${t.port ?? '-'}`));
      assert.deepEqual([...new Set(owned)].sort(), model.targets());
      assert.equal(index.endpointCount, model.uids().size);
      assert.deepEqual([...index.uids()].sort(), [...model.uids()].sort());
      assert.deepEqual([...index.sliceKeys()].sort(), [...model.slices.keys()].sort());
      for (const [key, view] of model.slices) assert.deepEqual(index.uidsOfSlice(key), view.endpoints.map((e) => e.uid));
    }
  }), { numRuns: 400 });
});

/** Slice `shop/a` of Service web: the first `n` pods, serving. */
function servingSlice(n: number): SliceSpec {
  return {
    key: 'a', namespace: 'shop', service: 'web', ports: [[8080, 'TCP']], pinOff: false, holdOff: false,
    endpoints: UIDS.slice(0, n).map((uid, i) => ({ uid, addresses: [ADDRESSES[i] as string], withNode: true, serving: true, terminating: false })),
  };
}

test('a readiness flip from the protobuf watch decodes the flipped endpoint only, and moves the index as the JSON would', () => {
  const spec = servingSlice(3);
  const index = new EndpointIndex((ns) => OPTED_IN.has(ns));
  const decodes = { n: 0 };
  index.upsert(viewSlice(encodedRaw(raw(spec), decodes), (key) => index.keptEndpoints(key)));
  assert.equal(decodes.n, 3, 'nothing kept yet: every endpoint decoded');
  const flipped = edited(spec, { edit: 'a', kind: 'flip', n: 1 });
  const view = viewSlice(encodedRaw(raw(flipped), decodes), (key) => index.keptEndpoints(key));
  assert.equal(decodes.n, 4, 'one more decode: the flipped endpoint');
  assert.deepEqual([view.keptPositionOf(0), view.keptPositionOf(1), view.keptPositionOf(2)], [0, -1, 2]);
  assert.equal(view.uidAt(2), UIDS[2], 'an endpoint not decoded answers from the kept row');
  assert.deepEqual([...index.changedBy(view)], [UIDS[1]]);
  assert.deepEqual([...index.upsert(view)], [UIDS[1]]);
  assert.equal(index.isDraining(UIDS[1] as string), true);
  // Read again as JSON (a relist), then from the watch: no digests kept in between, so all decoded.
  index.upsert(viewSlice(raw(flipped)));
  assert.equal(index.keptEndpoints('shop/a'), undefined);
  index.upsert(viewSlice(encodedRaw(raw(spec), decodes), (key) => index.keptEndpoints(key)));
  assert.equal(decodes.n, 7);
  assert.equal(index.isDraining(UIDS[1] as string), false);
});

test('a flip and the flip back from the protobuf watch: the kept digests follow the flip (the bytes of the flip back are the first ones, and must not stand for the flipped row)', () => {
  const spec = servingSlice(3);
  const index = new EndpointIndex((ns) => OPTED_IN.has(ns));
  const decodes = { n: 0 };
  const upsertEncoded = (s: SliceSpec): void => {
    const view = viewSlice(encodedRaw(raw(s), decodes), (key) => index.keptEndpoints(key));
    index.changedBy(view);
    index.upsert(view);
  };
  upsertEncoded(spec);
  const flipped = edited(spec, { edit: 'a', kind: 'flip', n: 1 });
  upsertEncoded(flipped);
  assert.equal(index.isDraining(UIDS[1] as string), true);
  assert.equal(decodes.n, 4);
  // The flip back: the endpoint's bytes are those of the first upsert again.
  upsertEncoded(spec);
  assert.equal(decodes.n, 5, 'the flipped-back endpoint is decoded: its bytes differ from the kept ones');
  assert.equal(index.isDraining(UIDS[1] as string), false);
  for (let round = 0; round < 3; round++) {
    upsertEncoded(flipped);
    assert.equal(index.isDraining(UIDS[1] as string), true, `round ${round}: flipped`);
    upsertEncoded(spec);
    assert.equal(index.isDraining(UIDS[1] as string), false, `round ${round}: back`);
  }
  assert.equal(decodes.n, 11, 'one decode per event, the flipped endpoint');
});

test('a pod listed twice with the same bytes: one copy stands for the kept row, the other is decoded', () => {
  const spec = servingSlice(2);
  const index = new EndpointIndex((ns) => OPTED_IN.has(ns));
  const decodes = { n: 0 };
  index.upsert(viewSlice(encodedRaw(raw(spec), decodes), (key) => index.keptEndpoints(key)));
  const [first, second] = spec.endpoints;
  const twice: SliceSpec = { ...spec, endpoints: [first!, first!, second!] };
  const view = viewSlice(encodedRaw(raw(twice), decodes), (key) => index.keptEndpoints(key));
  assert.deepEqual([view.keptPositionOf(0), view.keptPositionOf(1), view.keptPositionOf(2)], [0, -1, 1]);
  assert.equal(decodes.n, 3, 'two decoded first, then only the second copy');
  assert.equal(view.uidAt(1), UIDS[0]);
});

test('a view read against a kept slice that was replaced since is refused, not applied to the wrong rows', () => {
  const spec = servingSlice(2);
  const index = new EndpointIndex((ns) => OPTED_IN.has(ns));
  const decodes = { n: 0 };
  index.upsert(viewSlice(encodedRaw(raw(spec), decodes), (key) => index.keptEndpoints(key)));
  const stale = viewSlice(encodedRaw(raw(spec), decodes), (key) => index.keptEndpoints(key));
  index.upsert(viewSlice(encodedRaw(raw(edited(spec, { edit: 'a', kind: 'drop', n: 0 })), decodes), (key) => index.keptEndpoints(key)));
  assert.throws(() => index.upsert(stale), /since replaced/);
  assert.throws(() => index.changedBy(stale), /since replaced/);
});
