/**
 * The event-index contract (issue #8): one suite, run against the in-memory stand-in
 * (conntrack-events-memory.test.ts) and the real kernel through the addon
 * (conntrack-events.kernel.test.ts). The table is built with the test-support fill (events
 * really flow on the kernel), and the index is always compared with a full listing of the
 * same table, so neither side can drift.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConntrackFillResult, ConntrackFillSpec } from 'netlink-native/testing';
import { NetlinkError, type ConntrackApi, type ConntrackEntry, type ConntrackEventIndex, type ConntrackEventsApi } from 'netlink-native/types';
import { entryKey } from './conntrack-contract.js';

export interface EventsTarget {
  api: ConntrackApi & ConntrackEventsApi;
  fill(specs: ConntrackFillSpec[]): Promise<ConntrackFillResult>;
  close(): Promise<void>;
}

const POD = { v4: '10.244.1.10', v6: 'fd00:244:1::10' };
const OTHER = { v4: '10.244.2.20', v6: 'fd00:244:2::20' };
const CLIENT = { v4: '10.0.0.1', v6: 'fd00:10::1' };
const REMOTE = { v4: '192.0.2.50', v6: 'fd00:2::50' };
const NODE = { v4: '10.250.0.1', v6: 'fd00:250::1' };
const VIP = { v4: '10.96.0.10', v6: 'fd00:96::10' };
type Family = 'v4' | 'v6';

/** 12 entries to or from `pod` in one family; 10 concern it (original destination or reply source). */
export function podFlows(f: Family, pod: string, offset: number): ConntrackFillSpec[] {
  const c = CLIENT[f];
  return [
    { protocol: 'tcp', origSrc: c, srcPort: 20000 + offset, origDst: VIP[f], dstPort: 80, replySrc: pod, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', statusFlags: ['ASSURED', 'SEEN_REPLY'] },
    { protocol: 'udp', origSrc: c, srcPort: 30000 + offset, origDst: VIP[f], dstPort: 53, replySrc: pod, replySrcPort: 5353, count: 2, timeout: 100 },
    { protocol: 'tcp', origSrc: c, srcPort: 40000 + offset, origDst: pod, dstPort: 8080, count: 2, state: 'ESTABLISHED' },
    { protocol: 'ipip', origSrc: NODE[f], origDst: pod, count: 1 },
    { protocol: 'sctp', origSrc: c, srcPort: 3868 + offset, origDst: VIP[f], dstPort: 3868, replySrc: pod, count: 1, state: 'ESTABLISHED' },
    { protocol: 'tcp', origSrc: c, srcPort: 21000 + offset, origDst: VIP[f], dstPort: 80, replySrc: pod, replySrcPort: 8080, count: 1, zone: 5, state: 'ESTABLISHED' },
    // the pod's own egress: NOT one of its flows for the index (original source)
    { protocol: 'tcp', origSrc: pod, srcPort: 50000 + offset, origDst: REMOTE[f], dstPort: 443, count: 2, state: 'SYN_SENT' },
  ];
}
const CONCERNED_PER_FAMILY = 10;

function bothFamilies(pods: Record<Family, string>, offset: number): ConntrackFillSpec[] {
  return [...podFlows('v4', pods.v4, offset), ...podFlows('v6', pods.v6, offset)];
}

/** Waits until cond() holds (the kernel's events arrive on another thread). */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What a dump says the index should hold for `addresses`. */
async function dumpKeys(api: ConntrackApi, addresses: string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  return (await api.listConntrack({ addresses, match: ['origDst', 'replySrc'] })).map(entryKey).sort();
}

async function indexKeys(index: ConntrackEventIndex, addresses: string[]): Promise<string[]> {
  return (await index.flowsOf(addresses)).flows.map(entryKey).sort();
}

async function filled(t: EventsTarget, specs: ConntrackFillSpec[]): Promise<void> {
  const r = await t.fill(specs);
  assert.equal(r.failed, 0, `fill failed (errno ${r.firstErrno})`);
}

async function withIndex(make: () => Promise<EventsTarget>, options: Parameters<ConntrackEventsApi['openConntrackEvents']>[0], body: (t: EventsTarget, index: ConntrackEventIndex) => Promise<void>): Promise<void> {
  const t = await make();
  const index = await t.api.openConntrackEvents(options);
  try {
    await body(t, index);
  } finally {
    index.close();
    await t.close();
  }
}

export function conntrackEventsContract(name: string, make: () => Promise<EventsTarget>): void {
  describe(`conntrack event index contract: ${name}`, () => {
    it('indexes existing flows of newly watched addresses (one dump), then new ones from events, never the others', async () => {
      await withIndex(make, {}, async (t, index) => {
        await filled(t, bothFamilies(POD, 0));
        await index.setWatchedAddresses([POD.v4, POD.v6]);
        assert.equal(index.stats().flows, 2 * CONCERNED_PER_FAMILY, 'the dump pass indexed the existing flows');
        await filled(t, bothFamilies(OTHER, 100));
        await filled(t, [{ protocol: 'udp', origSrc: CLIENT.v4, srcPort: 1000, origDst: VIP.v4, dstPort: 53, replySrc: POD.v4, replySrcPort: 53, count: 5 }]);
        await until(() => index.stats().flows === 2 * CONCERNED_PER_FAMILY + 5, 'five new flows from events');
        const got = await index.flowsOf([POD.v4, POD.v6]);
        assert.equal(got.fresh, true);
        assert.deepEqual(got.flows.map(entryKey).sort(), await dumpKeys(t.api, [POD.v4, POD.v6]));
        const svc = got.flows.find((e) => e.family === 4 && e.protocol === 'tcp' && e.reply.src === POD.v4 && e.zone === 0 && e.original.dstPort === 80);
        assert.ok(svc, 'the v4 service flow');
        assert.equal(svc.state, 'ESTABLISHED');
        assert.ok(svc.statusFlags.includes('ASSURED'));
        assert.ok(svc.timeout > 500 && svc.timeout <= 600, `timeout ${svc.timeout}`);
        assert.equal(svc.reply.srcPort, 8080);
        assert.ok(got.flows.some((e) => e.zone === 5 && e.family === 6));
        assert.ok(got.flows.some((e) => e.protocol === 'ipip' && e.original.dst === POD.v6));
        // every non-TCP flow is refreshed by an exact GET (the kernel also re-checks TCP flows
        // learned from the dump: they may never announce their end, see ct_events.h)
        assert.ok(got.refreshed >= got.flows.filter((e) => e.protocol !== 'tcp').length, `refreshed ${got.refreshed}`);
        const udp = got.flows.find((e) => e.protocol === 'udp' && e.reply.src === POD.v4 && e.original.dstPort === 53 && e.original.srcPort === 30000);
        assert.ok(udp && udp.timeout > 80 && udp.timeout <= 100, `UDP timeout from the GET: ${udp?.timeout}`);
        const stats = index.stats();
        assert.equal(stats.watchedAddresses, 2);
        assert.equal(stats.stale, false);
        assert.equal(stats.overruns, 0);
        assert.ok(stats.bytesPerFlow > 0 && stats.bytesPerFlow <= 256, `bytes per flow ${stats.bytesPerFlow}`);
        assert.equal(stats.filter, 'bpf');
      });
    });

    it('removes flows on destroy events, and the index matches a full dump after churn', async () => {
      await withIndex(make, {}, async (t, index) => {
        await index.setWatchedAddresses([POD.v4, POD.v6, OTHER.v4]);
        for (let round = 0; round < 4; round++) {
          await filled(t, [
            { protocol: 'tcp', origSrc: '10.1.0.1', srcCount: 40, srcPort: 1000 + round * 100, origDst: VIP.v4, dstPort: 80, replySrc: POD.v4, count: 200, state: 'ESTABLISHED' },
            { protocol: 'udp', origSrc: 'fd00:1::1', srcCount: 40, srcPort: 1000 + round * 100, origDst: POD.v6, dstPort: 53, count: 120 },
            { protocol: 'tcp', origSrc: '10.2.0.1', srcCount: 40, srcPort: 1000 + round * 100, origDst: VIP.v4, dstPort: 80, replySrc: OTHER.v4, count: 80 },
            { protocol: 'tcp', origSrc: '10.3.0.1', srcCount: 40, srcPort: 1000 + round * 100, origDst: VIP.v4, dstPort: 80, replySrc: '10.244.9.9', count: 80 },
          ]);
          await t.api.deleteConntrack({ addresses: [round % 2 === 0 ? POD.v4 : POD.v6], match: ['replySrc', 'origDst'] });
        }
        const watched = [POD.v4, POD.v6, OTHER.v4];
        const expected = await dumpKeys(t.api, watched);
        assert.ok(expected.length >= 320, `fixture left ${expected.length} watched entries`);
        await until(async () => (await indexKeys(index, watched)).length === expected.length, 'the index to settle');
        assert.deepEqual(await indexKeys(index, watched), expected);
        assert.equal(index.stats().stale, false);
      });
    });

    it('drops unrelated events before they reach the index (kernel-side filter)', async () => {
      await withIndex(make, {}, async (t, index) => {
        await index.setWatchedAddresses([POD.v4]);
        const before = index.stats().events;
        await filled(t, [{ protocol: 'tcp', origSrc: '10.5.0.1', srcCount: 100, origDst: VIP.v4, dstPort: 80, replySrc: '10.128.0.1', replySrcCount: 50, count: 3000 }]);
        await filled(t, [{ protocol: 'udp', origSrc: CLIENT.v4, origDst: VIP.v4, dstPort: 53, replySrc: POD.v4, count: 1 }]);
        await until(() => index.stats().flows === 1, 'the one watched flow');
        const stats = index.stats();
        assert.ok(stats.events - before <= 5, `events read for 3000 unrelated flows: ${stats.events - before}`);
        assert.equal(stats.eventsFilteredOut, 0);
      });
    });

    it('deletes a gone pod\'s flows by exact tuple from the index; a verification pass finds nothing left', async () => {
      await withIndex(make, {}, async (t, index) => {
        await filled(t, [...bothFamilies(POD, 0), ...bothFamilies(OTHER, 100)]);
        await index.setWatchedAddresses([POD.v4, POD.v6, OTHER.v4, OTHER.v6]);
        const others = await dumpKeys(t.api, [OTHER.v4, OTHER.v6]);
        const all = (await t.api.listConntrack()).length;
        const r = await index.deleteFlowsOf([POD.v4, POD.v6]);
        assert.deepEqual({ fresh: r.fresh, deleted: r.deleted, alreadyGone: r.alreadyGone, failed: r.failed }, { fresh: true, deleted: 2 * CONCERNED_PER_FAMILY, alreadyGone: 0, failed: 0 });
        assert.deepEqual(r.byProtocol, { tcp: 12, udp: 4, ipip: 2, sctp: 2 });
        assert.ok(r.ms >= 0);
        assert.deepEqual(await dumpKeys(t.api, [POD.v4, POD.v6]), []);
        assert.equal((await t.api.listConntrack()).length, all - 2 * CONCERNED_PER_FAMILY, 'nothing else was deleted');
        assert.deepEqual(await dumpKeys(t.api, [OTHER.v4, OTHER.v6]), others);
        assert.equal((await index.flowsOf([POD.v4, POD.v6])).flows.length, 0);
        const v = await index.verify([POD.v4, POD.v6]);
        assert.equal(v.deleted, 0);
        assert.ok(v.scanned >= all - 2 * CONCERNED_PER_FAMILY);
        const again = await index.deleteFlowsOf([POD.v4, POD.v6]);
        assert.equal(again.deleted + again.alreadyGone, 0);
        const s = index.stats();
        assert.equal(s.deletedByIndex, 2 * CONCERNED_PER_FAMILY);
        assert.equal(s.verifyPasses, 1);
        assert.equal(s.verifyDeleted, 0);
      });
    });

    it('an overrun (tiny receive buffer, burst of watched flows) is detected, reported stale, and one resync fixes it; verify catches what the index missed', async () => {
      await withIndex(make, { recvBufferBytes: 4096, autoResync: false }, async (t, index) => {
        await index.setWatchedAddresses([POD.v4, POD.v6]);
        await filled(t, [
          { protocol: 'udp', origSrc: '10.1.0.1', srcCount: 100, origDst: VIP.v4, dstPort: 53, replySrc: POD.v4, count: 3000 },
          { protocol: 'tcp', origSrc: 'fd00:1::1', srcCount: 100, origDst: POD.v6, dstPort: 80, count: 1000, state: 'ESTABLISHED' },
        ]);
        await until(() => index.stats().overruns > 0, 'an overrun');
        assert.equal(index.stats().stale, true);
        const stale = await index.flowsOf([POD.v4, POD.v6]);
        assert.equal(stale.fresh, false, 'never "no flows" from a stale index');
        await index.resync();
        const stats = index.stats();
        assert.equal(stats.stale, false);
        assert.ok(stats.resyncs >= 1);
        const fresh = await index.flowsOf([POD.v4, POD.v6]);
        assert.equal(fresh.fresh, true);
        assert.equal(fresh.flows.length, 4000);
        assert.deepEqual(fresh.flows.map(entryKey).sort(), await dumpKeys(t.api, [POD.v4, POD.v6]));

        // lose events again, then delete through the index: verify deletes what it missed
        await filled(t, [{ protocol: 'udp', origSrc: '10.9.0.1', srcCount: 100, origDst: VIP.v4, dstPort: 53, replySrc: POD.v4, count: 3000 }]);
        await until(() => index.stats().stale, 'a second overrun');
        const r = await index.deleteFlowsOf([POD.v4, POD.v6]);
        assert.equal(r.fresh, false);
        assert.ok(r.deleted >= 4000, `deleted ${r.deleted}`);
        const v = await index.verify([POD.v4, POD.v6]);
        assert.equal(r.deleted + r.alreadyGone + v.deleted, 7000, `index ${r.deleted}+${r.alreadyGone}, verify ${v.deleted}`);
        assert.ok(v.deleted > 0, 'the verification pass found entries the index had missed');
        assert.deepEqual(await dumpKeys(t.api, [POD.v4, POD.v6]), []);
        assert.equal(index.stats().verifyDeleted, v.deleted);
      });
    });

    it('answers each address with exactly its flows after churn and watched-set changes (per-address lists)', async () => {
      await withIndex(make, {}, async (t, index) => {
        const pod = (i: number): string => `10.244.7.${i}`;
        const pod6 = (i: number): string => `fd00:244:7::${i}`;
        const round = (r: number): ConntrackFillSpec[] => [
          // service flows spread over 8 pods (reply source), 20 each
          { protocol: 'tcp', origSrc: '10.7.0.1', srcCount: 20, srcPort: 1000 + r * 100, origDst: VIP.v4, dstPort: 80, replySrc: pod(1), replySrcCount: 8, count: 160, state: 'ESTABLISHED' },
          // direct flows: original destination = reply source
          { protocol: 'udp', origSrc: '10.8.0.1', srcCount: 10, srcPort: 1000 + r * 100, origDst: pod(3), dstPort: 53, count: 30 },
          // one watched pod DNATed to another: listed under both, returned once for both
          { protocol: 'tcp', origSrc: '10.9.0.1', srcCount: 5, srcPort: 1000 + r * 100, origDst: pod(2), dstPort: 80, replySrc: pod(5), count: 25 },
          // original destination watched, reply source not
          { protocol: 'tcp', origSrc: '10.10.0.1', srcCount: 5, srcPort: 1000 + r * 100, origDst: pod(4), dstPort: 80, replySrc: '10.244.99.1', count: 15 },
          // a pod that is not watched until the set changes
          { protocol: 'tcp', origSrc: '10.11.0.1', srcCount: 5, srcPort: 1000 + r * 100, origDst: VIP.v4, dstPort: 81, replySrc: pod(9), count: 10 },
          { protocol: 'udp', origSrc: 'fd00:7::1', srcCount: 10, srcPort: 1000 + r * 100, origDst: VIP.v6, dstPort: 53, replySrc: pod6(1), replySrcCount: 4, count: 40 },
        ];
        const check = async (watched: string[]): Promise<void> => {
          const all = await dumpKeys(t.api, watched);
          await until(async () => (await indexKeys(index, watched)).length === all.length, 'the index to settle');
          assert.deepEqual(await indexKeys(index, watched), all, 'the whole watched set, each flow once');
          assert.equal(index.stats().flows, all.length, 'no flow of an unwatched address is kept');
          for (const a of watched) {
            const got = await index.flowsOf([a]);
            assert.equal(got.fresh, true);
            assert.deepEqual(got.flows.map(entryKey).sort(), await dumpKeys(t.api, [a]), `the flows of ${a}`);
          }
          for (let i = 0; i + 1 < watched.length; i += 2) {
            const pair = [watched[i]!, watched[i + 1]!];
            assert.deepEqual(await indexKeys(index, pair), await dumpKeys(t.api, pair), `the flows of ${pair.join(' + ')}`);
          }
        };
        const first = [1, 2, 3, 4, 5, 6, 7, 8].map(pod).concat([1, 2, 3, 4].map(pod6));
        await filled(t, round(0));
        await index.setWatchedAddresses(first);
        await check(first);
        await filled(t, round(1));
        await t.api.deleteConntrack({ addresses: [pod(2), pod(6), pod6(3)], match: ['replySrc', 'origDst'] });
        await t.api.deleteConntrack({ addresses: [pod(1)], match: ['replySrc'], protocols: ['tcp'] });
        await filled(t, round(2));
        await check(first);
        // pod 2 leaves (its DNATed flows stay, under pod 5), 3 and 4 leave, pod 9 comes in
        const second = [pod(1), pod(5), pod(7), pod(9), pod6(2), pod6(4)];
        await index.setWatchedAddresses(second);
        assert.equal((await index.flowsOf([pod(3)])).fresh, false);
        await check(second);
        await filled(t, round(3));
        await check(second);
        await index.setWatchedAddresses([...second, pod(2), pod(3)]);
        await check([...second, pod(2), pod(3)]);
      });
    });

    it('answers fresh=false for an address it does not watch, forgets unwatched addresses, and checks arguments', async () => {
      await withIndex(make, {}, async (t, index) => {
        await filled(t, [...bothFamilies(POD, 0), ...bothFamilies(OTHER, 100)]);
        await index.setWatchedAddresses([POD.v4, 'FD00:244:1:0:0:0:0:10']);
        assert.equal((await index.flowsOf([OTHER.v4])).fresh, false);
        assert.equal(index.stats().flows, 2 * CONCERNED_PER_FAMILY);
        await index.setWatchedAddresses([POD.v6, OTHER.v4]);
        assert.equal(index.stats().watchedAddresses, 2);
        assert.equal(index.stats().flows, 2 * CONCERNED_PER_FAMILY, 'POD.v4 left, OTHER.v4 came in');
        assert.deepEqual(await indexKeys(index, [POD.v6, OTHER.v4]), await dumpKeys(t.api, [POD.v6, OTHER.v4]));
        const bad = (e: unknown): boolean => e instanceof NetlinkError && e.code === 'EINVAL';
        await assert.rejects(index.setWatchedAddresses(['10.0.0.300']), bad);
        await assert.rejects(index.flowsOf('10.0.0.1' as unknown as string[]), bad);
        await assert.rejects(index.deleteFlowsOf(['pod-a']), bad);
        assert.equal(index.stats().watchedAddresses, 2, 'a rejected call changed nothing');
        index.close();
        await assert.rejects(index.flowsOf([POD.v6]), (e: unknown) => e instanceof NetlinkError && e.code === 'EBADF');
      });
    });
  });
}

export type { ConntrackEntry };
