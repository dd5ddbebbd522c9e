/**
 * IndexedConntrack against the in-memory conntrack and its event-index stand-in
 * (native/lib/memory-conntrack-events.ts: ctnetlink events, the kernel-side filter, overruns).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryConntrack } from 'netlink-native/memory';
import type { ConntrackFillSpec } from 'netlink-native/testing';
import { IndexedConntrack } from './indexed-conntrack.js';
import { countOpenFlows, DEFAULT_FLOW_TIMEOUTS } from '../drain/flows.js';
import { FLUSH_PROTOCOLS } from './ghost-cleanup.js';

const POD = '10.30.0.1';
const OTHER = '10.30.0.2';
const specs = (pod: string, port: number): ConntrackFillSpec[] => [
  { protocol: 'tcp', origSrc: '192.0.2.1', srcPort: port, origDst: '10.96.0.1', dstPort: 80, replySrc: pod, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', timeout: 3600 },
  { protocol: 'udp', origSrc: '192.0.2.2', srcPort: port, origDst: pod, dstPort: 53, count: 2, timeout: 120 },
];

function setup(recvBufferBytes?: number) {
  const ct = new MemoryConntrack();
  const listed: unknown[] = [];
  const dump = {
    listConntrack: (o?: Parameters<MemoryConntrack['listConntrack']>[0]) => {
      listed.push(o);
      return ct.listConntrack(o);
    },
    deleteConntrack: (o: Parameters<MemoryConntrack['deleteConntrack']>[0]) => ct.deleteConntrack(o),
    deleteConntrackEntries: (e: Parameters<MemoryConntrack['deleteConntrackEntries']>[0]) => ct.deleteConntrackEntries(e),
    scanDnatEntries: (o: Parameters<MemoryConntrack['scanDnatEntries']>[0]) => ct.scanDnatEntries(o),
    conntrackStats: () => ct.conntrackStats(),
  };
  const fallbacks: string[] = [];
  const leftovers: number[] = [];
  return {
    ct,
    listed,
    fallbacks,
    leftovers,
    open: async () => new IndexedConntrack(dump, await ct.openConntrackEvents(recvBufferBytes === undefined ? {} : { recvBufferBytes, autoResync: false }), pino({ level: 'silent' }), {
      fallback: (use, why) => fallbacks.push(`${use}:${why}`),
      verifyLeftovers: (n) => leftovers.push(n),
    }),
  };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('open flows come from the index once the pod IP is watched, from a dump before', async () => {
  const s = setup();
  await s.ct.insertConntrackForTest([...specs(POD, 1000), ...specs(OTHER, 2000)]);
  const indexed = await s.open();
  try {
    const before = await countOpenFlows(indexed, [POD], 10_000, DEFAULT_FLOW_TIMEOUTS);
    assert.equal(before.entries, 5);
    assert.deepEqual(s.fallbacks, ['flows:not fresh'], 'not watched yet: the dump answered');
    assert.equal(s.listed.length, 1);

    await indexed.watch([POD, OTHER]);
    await s.ct.insertConntrackForTest(specs(POD, 3000)); // new flows arrive as events
    await turn();
    const after = await countOpenFlows(indexed, [POD], 10_000, DEFAULT_FLOW_TIMEOUTS);
    assert.equal(after.entries, 10);
    assert.equal(after.byProtocol.tcp, 6);
    assert.equal(s.listed.length, 1, 'no dump: the index answered');
  } finally {
    indexed.close();
  }
});

test('a gone pod: the index deletes its flows, the verification dump pass finds nothing left; counts by protocol', async () => {
  const s = setup();
  await s.ct.insertConntrackForTest([...specs(POD, 1000), ...specs(OTHER, 2000)]);
  const indexed = await s.open();
  try {
    await indexed.watch([POD, OTHER]);
    const result = await indexed.deleteConntrack({ addresses: [POD], match: ['replySrc', 'origDst'], protocols: FLUSH_PROTOCOLS });
    assert.equal(result.deleted, 5);
    assert.deepEqual(result.byProtocol, { tcp: { deleted: 3, alreadyGone: 0, failed: 0 }, udp: { deleted: 2, alreadyGone: 0, failed: 0 } });
    assert.deepEqual(s.leftovers, [0]);
    assert.deepEqual(s.fallbacks, []);
    assert.equal((await s.ct.listConntrack({ addresses: [POD], match: ['replySrc', 'origDst'] })).length, 0);
    assert.equal((await s.ct.listConntrack({ addresses: [OTHER], match: ['replySrc', 'origDst'] })).length, 5, 'the other pod untouched');
  } finally {
    indexed.close();
  }
});

test('a stale index (events lost): flows from the dump, and the verification pass deletes what the index missed', async () => {
  const s = setup(2 * 1024); // room for 2 queued events: a burst of 5 overruns it
  const indexed = await s.open();
  try {
    await indexed.watch([POD]);
    await s.ct.insertConntrackForTest(specs(POD, 1000));
    await turn();
    assert.equal(indexed.stats().stale, true, 'the burst overran the event queue');
    const open = await countOpenFlows(indexed, [POD], 10_000, DEFAULT_FLOW_TIMEOUTS);
    assert.equal(open.entries, 5, 'the dump answered');
    assert.deepEqual(s.fallbacks, ['flows:not fresh']);
    const result = await indexed.deleteConntrack({ addresses: [POD], match: ['replySrc', 'origDst'], protocols: FLUSH_PROTOCOLS });
    assert.equal(result.deleted, 5);
    assert.deepEqual(s.fallbacks, ['flows:not fresh', 'cleanup:not fresh']);
    assert.deepEqual(s.leftovers, [], 'leftovers are only counted after a fresh index deletion');
    assert.equal((await s.ct.listConntrack()).length, 0);
  } finally {
    indexed.close();
  }
});

test('the watched set: latest wins, applied one change at a time', async () => {
  const s = setup();
  const indexed = await s.open();
  try {
    void indexed.watch([POD]);
    await indexed.watch([POD, OTHER]);
    assert.equal(indexed.stats().watchedAddresses, 2);
    await indexed.watch([OTHER]);
    assert.equal(indexed.stats().watchedAddresses, 1);
  } finally {
    indexed.close();
  }
});
