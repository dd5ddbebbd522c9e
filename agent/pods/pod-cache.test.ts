/**
 * The packed store answers every question the agent asks of it exactly as the full pod
 * objects would: a reference model keeps the pods themselves (in upsert order) and computes
 * each answer from them with the same readers (viewPod, parseDrainRequest); random pods and
 * random upsert/remove sequences, with shared and reused IPs, duplicated drain ids, IPv6,
 * non-canonical addresses, hostNetwork, deleting and terminal pods.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ANNOTATION_DRAIN, ANNOTATION_DRAIN_ID, ANNOTATION_FLOW_PINNING, ANNOTATION_MIN_DRAIN } from '../../src/contract.js';
import { parseDrainRequest } from '../../src/annotations.js';
import { podKey, type PodLike } from '../../src/pod/pod-like.js';
import { viewPod } from '../../src/pod/view.js';
import { PodCache, type CachedPod } from './pod-cache.js';

const SLACK = 5000;
const T0 = Date.parse('2026-12-01T10:00:00Z');
// Both forms the store packs (a UUID, 32 hex digits) and text it keeps as it is, near misses included.
const UIDS = ['u1', 'u2', '0f8e9c1a-1234-4b6d-9a51-7c2e3f4d5b6a', '0f8e9c1a-1234-4b6d-9a51-7c2e3f4d5b6b', '0F8E9C1A-1234-4B6D-9A51-7C2E3F4D5B6A', '0f8e9c1a12344b6d9a517c2e3f4d5b6a'];
const IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3', 'fd00::1', 'FD00::2', ' 10.0.0.1 ', '010.0.0.1', '255.255.255.255', '0.0.0.0'];
const DRAIN_IDS = ['d1', '0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdee', '', '0123456789abcdef0123456789abcdeg', '0f8e9c1a-1234-4b6d-9a51-7c2e3f4d5b6a'];
const NOWS = [T0 - 1, T0, T0 + SLACK, T0 + 20_000, T0 + 100_000];

const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

const podArb: fc.Arbitrary<PodLike> = fc.record({
  uid: optional(fc.constantFrom(...UIDS)),
  namespace: optional(fc.constantFrom('shop', 'pay', '')),
  name: optional(fc.constantFrom('a', 'b', 'c')),
  nodeName: optional(fc.constantFrom('n1', 'n2')),
  hostNetwork: fc.boolean(),
  podIP: optional(fc.constantFrom(...IPS)),
  podIPs: fc.array(fc.constantFrom(...IPS), { maxLength: 3 }),
  phase: optional(fc.constantFrom('Running', 'Pending', 'Succeeded', 'Failed')),
  ready: optional(fc.constantFrom('True', 'False', 'Unknown')),
  deletion: optional(fc.oneof(fc.integer({ min: -10_000, max: 60_000 }).map((d) => new Date(T0 + d).toISOString()), fc.constant('not a time'), fc.integer({ min: 0, max: 60_000 }).map((d) => new Date(T0 + d)))),
  drainId: optional(fc.constantFrom(...DRAIN_IDS)),
  drain: optional(fc.constantFrom('30s', '0', 'off', 'bad', '5m')),
  minDrain: optional(fc.constantFrom('1s', 'x')),
  flowPinning: optional(fc.constantFrom('off', ' OFF ', 'false', 'on')),
}).map((p) => {
  const annotations: Record<string, string> = { 'other.example/x': 'y' };
  if (p.drainId !== undefined) annotations[ANNOTATION_DRAIN_ID] = p.drainId;
  if (p.drain !== undefined) annotations[ANNOTATION_DRAIN] = p.drain;
  if (p.minDrain !== undefined) annotations[ANNOTATION_MIN_DRAIN] = p.minDrain;
  if (p.flowPinning !== undefined) annotations[ANNOTATION_FLOW_PINNING] = p.flowPinning;
  return {
    metadata: { uid: p.uid, namespace: p.namespace, name: p.name, annotations, deletionTimestamp: p.deletion },
    spec: { nodeName: p.nodeName, hostNetwork: p.hostNetwork },
    status: { phase: p.phase, podIP: p.podIP, podIPs: p.podIPs.map((ip) => ({ ip })), conditions: p.ready === undefined ? [] : [{ type: 'Ready', status: p.ready }] },
  };
});

type Op = { kind: 'upsert'; pod: PodLike } | { kind: 'remove'; uid: string } | { kind: 'removePod'; pod: PodLike };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: podArb.map((pod): Op => ({ kind: 'upsert', pod })) },
  { weight: 2, arbitrary: fc.constantFrom(...UIDS, 'shop/a').map((uid): Op => ({ kind: 'remove', uid })) },
  { weight: 1, arbitrary: podArb.map((pod): Op => ({ kind: 'removePod', pod })) },
);

const uidOf = (pod: PodLike): string => pod.metadata?.uid ?? podKey(pod);

/** The answers from the full objects, as the agent's former cache computed them. */
class Reference {
  readonly pods = new Map<string, PodLike>();
  upsert(pod: PodLike): void {
    this.pods.delete(uidOf(pod));
    this.pods.set(uidOf(pod), pod);
  }
  remove(uid: string): void {
    this.pods.delete(uid);
  }
  cached(pod: PodLike): CachedPod {
    const annotations = pod.metadata?.annotations ?? {};
    return {
      view: viewPod(pod, SLACK),
      namespace: pod.metadata?.namespace ?? '',
      name: pod.metadata?.name ?? '',
      drain: parseDrainRequest(annotations),
      flowPinningOff: ['off', 'false'].includes((annotations[ANNOTATION_FLOW_PINNING] ?? '').trim().toLowerCase()),
    };
  }
  get(uid: string): CachedPod | undefined {
    const pod = this.pods.get(uid);
    return pod === undefined ? undefined : this.cached(pod);
  }
  byDrain(drainId: string): CachedPod | undefined {
    if (drainId === '') return undefined;
    const holders = [...this.pods.values()].filter((p) => p.metadata?.annotations?.[ANNOTATION_DRAIN_ID] === drainId);
    const last = holders[holders.length - 1];
    return last === undefined ? undefined : this.cached(last);
  }
  liveHolder(ip: string, nowMs: number, exceptUid: string | undefined): CachedPod | undefined {
    for (const pod of this.pods.values()) {
      const c = this.cached(pod);
      if (c.view.uid === exceptUid || !c.view.ips.includes(ip) || c.view.terminal) continue;
      if (c.view.goneAtMs !== undefined && nowMs >= c.view.goneAtMs) continue;
      return c;
    }
    return undefined;
  }
}

function check(store: PodCache, ref: Reference): void {
  assert.equal(store.size, ref.pods.size);
  assert.equal(store.deleting, [...ref.pods.values()].filter((p) => ref.cached(p).view.deleting).length);
  assert.deepEqual([...store.flowPinningOptOuts()].sort(), [...ref.pods.values()].filter((p) => ref.cached(p).flowPinningOff).map(uidOf).sort());
  for (const uid of [...UIDS, 'shop/a', 'x']) {
    assert.deepEqual(store.get(uid), ref.get(uid), `get(${uid})`);
    assert.deepEqual(store.view(uid), ref.get(uid)?.view, `view(${uid})`);
    assert.equal(store.has(uid), ref.pods.has(uid));
  }
  for (const id of DRAIN_IDS) assert.deepEqual(store.byDrain(id), ref.byDrain(id), `byDrain(${id})`);
  const byUid = (a: { uid: string }, b: { uid: string }): number => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
  assert.deepEqual(store.views().sort(byUid), [...ref.pods.values()].map((p) => ref.cached(p).view).sort(byUid));
  const ips: string[] = [];
  store.forEachIp((ip) => ips.push(ip));
  assert.deepEqual(ips.sort(), [...ref.pods.values()].flatMap((p) => ref.cached(p).view.ips).sort());
  for (const ip of ['10.0.0.1', '10.0.0.2', 'fd00::1', 'fd00::2', '010.0.0.1', '0.0.0.0', '255.255.255.255', '10.0.0.9']) {
    for (const now of NOWS) {
      for (const except of [undefined, 'u1', UIDS[2]]) {
        assert.deepEqual(store.liveHolder(ip, now, except), ref.liveHolder(ip, now, except), `liveHolder(${ip}, ${now}, ${String(except)})`);
      }
    }
  }
}

test('pod store: every answer equals the full pod objects\' over random pods and update sequences', () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40, size: 'max' }), (ops) => {
      const store = new PodCache(SLACK);
      const ref = new Reference();
      for (const op of ops) {
        if (op.kind === 'upsert') {
          const returned = store.upsert(op.pod);
          ref.upsert(op.pod);
          assert.deepEqual(returned, ref.get(uidOf(op.pod)));
        } else {
          const uid = op.kind === 'remove' ? op.uid : uidOf(op.pod);
          const expected = ref.get(uid);
          assert.deepEqual(op.kind === 'remove' ? store.remove(op.uid) : store.remove(op.pod), expected);
          ref.remove(uid);
        }
        check(store, ref);
      }
    }),
    { numRuns: 150 },
  );
});

test('pod store: shared values are stored once and dropped with their last pod (churn does not grow it)', () => {
  const store = new PodCache(0);
  const pod = (i: number): PodLike => ({
    metadata: { uid: `uid-${i}`, namespace: `ns-${i % 3}`, name: `p-${i}`, annotations: { [ANNOTATION_DRAIN]: '30s', [ANNOTATION_DRAIN_ID]: `d-${i}` } },
    spec: { nodeName: `node-${i % 5}` },
    status: { phase: 'Running', podIP: `10.1.${i >> 8}.${i & 255}`, conditions: [{ type: 'Ready', status: 'True' }] },
  });
  for (let i = 0; i < 1000; i++) store.upsert(pod(i));
  assert.deepEqual(store.interned, { namespaces: 3, nodes: 5, drainSettings: 1 });
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 1000; i++) {
      store.remove(`uid-${i + round * 1000}`);
      store.upsert(pod(i + (round + 1) * 1000));
    }
  }
  assert.equal(store.size, 1000);
  assert.deepEqual(store.interned, { namespaces: 3, nodes: 5, drainSettings: 1 });
  for (let i = 5000; i < 6000; i++) store.remove(`uid-${i}`);
  assert.deepEqual(store.interned, { namespaces: 0, nodes: 0, drainSettings: 0 });
});

test('pod store: 20,000 pods with API-server uids and webhook drain ids, through page boundaries, table rebuilds and churn', () => {
  const store = new PodCache(0);
  const hex = (n: number, width: number): string => (n >>> 0).toString(16).padStart(width, '0').slice(-width);
  const uid = (i: number, gen: number): string => `${hex(i, 8)}-${hex(gen, 4)}-4abc-8def-${hex(Math.imul(i, 2654435761), 12)}`;
  const drainId = (i: number, gen: number): string => `${hex(i, 8)}${hex(gen, 8)}${hex(Math.imul(i + gen, 40503), 16)}`;
  const ip = (i: number): string => `10.2.${i >> 8}.${i & 255}`;
  const pod = (i: number, gen: number): PodLike => ({
    metadata: { uid: uid(i, gen), namespace: 'shop', name: `p-${i}`, annotations: { [ANNOTATION_DRAIN]: '30s', [ANNOTATION_DRAIN_ID]: drainId(i, gen) } },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running', podIP: ip(i), conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const N = 20_000;
  const gens = new Array<number>(N).fill(0);
  for (let i = 0; i < N; i++) store.upsert(pod(i, 0));
  for (let round = 0; round < 2 * N; round++) {
    const i = Math.imul(round, 7919) % N;
    assert.ok(store.remove(uid(i, gens[i] as number)) !== undefined);
    gens[i] = (gens[i] as number) + 1;
    store.upsert(pod(i, gens[i]));
  }
  assert.equal(store.size, N);
  for (let i = 0; i < N; i++) {
    const gen = gens[i] as number;
    assert.equal(store.get(uid(i, gen))?.view.ips[0], ip(i));
    assert.equal(store.byDrain(drainId(i, gen))?.view.uid, uid(i, gen));
    assert.equal(store.liveHolder(ip(i), 0)?.view.drainId, drainId(i, gen));
    if (gen > 0) assert.equal(store.has(uid(i, gen - 1)), false);
  }
  // 67 bytes a slot in 4,096-slot pages, plus three index tables at a load of 0.3 to 0.7 (4 bytes a position).
  assert.ok(store.columnBytes < N * (70 + 3 * 14), `${store.columnBytes} bytes of columns and tables`);
});
