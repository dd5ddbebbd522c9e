/**
 * The conntrack contract: one suite, run against the in-memory stand-in
 * (conntrack-memory.test.ts) and the real kernel through the addon (conntrack.kernel.test.ts).
 * Every case builds the same table with the test-support fill, acts through ConntrackApi and
 * compares full listings before and after, with expected counts written down from the fixture,
 * so the stand-in cannot drift from the kernel.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConntrackFillResult, ConntrackFillSpec } from 'netlink-native/testing';
import { NetlinkError, type ConntrackApi, type ConntrackEntry, type ConntrackMatch } from 'netlink-native/types';

export interface ConntrackTarget {
  api: ConntrackApi;
  fill(specs: ConntrackFillSpec[]): Promise<ConntrackFillResult>;
  /** Keys of the table as an independent tool sees it (`conntrack -L`), when there is one. */
  oracleKeys?(): Promise<string[]>;
  close(): Promise<void>;
}

export const POD = { v4: '10.244.1.10', v6: 'fd00:244:1::10' };
const OTHER = { v4: '10.244.2.20', v6: 'fd00:244:2::20' };
const CLIENT = { v4: '10.0.0.1', v6: 'fd00:10::1' };
const REMOTE = { v4: '192.0.2.50', v6: 'fd00:2::50' };
const NODE = { v4: '10.250.0.1', v6: 'fd00:250::1' };
const VIP = { v4: '10.96.0.10', v6: 'fd00:96::10' };
const MARK = 0x42;

type Family = 'v4' | 'v6';

/** Entries to (or from) `pod`, per family. Numbers per match mode are listed in EXPECTED. */
function podFlows(f: Family, pod: string, clientOffset: number): ConntrackFillSpec[] {
  const client = CLIENT[f];
  return [
    // a service flow, DNATed to the pod: reply source is the pod
    { protocol: 'tcp', origSrc: client, srcPort: 20000 + clientOffset, origDst: VIP[f], dstPort: 80, replySrc: pod, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', statusFlags: ['ASSURED', 'SEEN_REPLY'], mark: MARK },
    { protocol: 'udp', origSrc: client, srcPort: 30000 + clientOffset, origDst: VIP[f], dstPort: 53, replySrc: pod, replySrcPort: 5353, count: 2 },
    // direct traffic to the pod
    { protocol: 'tcp', origSrc: client, srcPort: 40000 + clientOffset, origDst: pod, dstPort: 8080, count: 2, state: 'ESTABLISHED' },
    // the pod's own egress
    { protocol: 'tcp', origSrc: pod, srcPort: 50000 + clientOffset, origDst: REMOTE[f], dstPort: 443, count: 2, state: 'SYN_SENT' },
    // IPIP (DSR / tunnelled) to the pod
    { protocol: 'ipip', origSrc: NODE[f], origDst: pod, count: 1 },
    { protocol: 'sctp', origSrc: client, srcPort: 3868 + clientOffset, origDst: VIP[f], dstPort: 3868, replySrc: pod, count: 1, state: 'ESTABLISHED' },
    // the same service flow in conntrack zone 5
    { protocol: 'tcp', origSrc: client, srcPort: 21000 + clientOffset, origDst: VIP[f], dstPort: 80, replySrc: pod, replySrcPort: 8080, count: 1, zone: 5, state: 'ESTABLISHED' },
  ];
}

/** The fixture: the targeted pod, another pod and unrelated traffic, in both families. */
export function fixture(): ConntrackFillSpec[] {
  const specs: ConntrackFillSpec[] = [];
  for (const f of ['v4', 'v6'] as const) {
    specs.push(...podFlows(f, POD[f], 0));
    specs.push(...podFlows(f, OTHER[f], 100));
    specs.push({ protocol: 'udp', origSrc: CLIENT[f], srcPort: 60000, origDst: REMOTE[f], dstPort: 123, count: 1 });
  }
  return specs;
}

/** Entries of the fixture to/from POD selected by each match mode (both families). */
const EXPECTED: Record<ConntrackMatch, number> = {
  origSrc: 2 * 2, // egress
  origDst: 2 * (2 + 1), // direct + ipip
  replySrc: 2 * (3 + 2 + 2 + 1 + 1 + 1), // service tcp/udp/sctp/zoned + direct + ipip
  replyDst: 2 * 2, // egress
};
const FIXTURE_SIZE = 2 * (2 * 12 + 1);

export function entryKey(e: Pick<ConntrackEntry, 'family' | 'protocolNumber' | 'original' | 'zone'>): string {
  return [e.family, e.protocolNumber, e.original.src, e.original.dst, e.original.srcPort ?? '-', e.original.dstPort ?? '-', e.zone].join(' ');
}

/** An entry without the fields that change by themselves (timeout) or are ids. */
function stable(e: ConntrackEntry): Omit<ConntrackEntry, 'timeout' | 'id'> {
  const { timeout: _t, id: _i, ...rest } = e;
  return rest;
}

function sortedStable(entries: ConntrackEntry[]): Omit<ConntrackEntry, 'timeout' | 'id'>[] {
  return entries.map(stable).sort((a, b) => (entryKey(a) < entryKey(b) ? -1 : 1));
}

function fieldOf(e: ConntrackEntry, m: ConntrackMatch): string {
  return m === 'origSrc' ? e.original.src : m === 'origDst' ? e.original.dst : m === 'replySrc' ? e.reply.src : e.reply.dst;
}

async function filled(make: () => Promise<ConntrackTarget>, specs = fixture()): Promise<ConntrackTarget> {
  const target = await make();
  const result = await target.fill(specs);
  assert.equal(result.failed, 0, `fill failed (errno ${result.firstErrno})`);
  assert.equal(result.exists, 0);
  return target;
}

async function withTarget(make: () => Promise<ConntrackTarget>, body: (t: ConntrackTarget) => Promise<void>, specs?: ConntrackFillSpec[]): Promise<void> {
  const target = await filled(make, specs);
  try {
    await body(target);
  } finally {
    await target.close();
  }
}

async function assertOracleAgrees(t: ConntrackTarget): Promise<void> {
  if (t.oracleKeys === undefined) return;
  const ours = (await t.api.listConntrack()).map(entryKey).sort();
  assert.deepEqual((await t.oracleKeys()).sort(), ours, 'conntrack -L disagrees with listConntrack');
}

/** Deletes with `options`, then checks: exactly the entries `selected` picks are gone, all others unchanged. */
async function deleteAndCompare(t: ConntrackTarget, options: Parameters<ConntrackApi['deleteConntrack']>[0], selected: (e: ConntrackEntry) => boolean, expectedCount: number): Promise<void> {
  const before = await t.api.listConntrack();
  const targeted = before.filter(selected);
  assert.equal(targeted.length, expectedCount, 'fixture: entries the filter should select');
  const result = await t.api.deleteConntrack(options);
  assert.equal(result.scanned, before.length);
  assert.equal(result.matched, expectedCount);
  assert.equal(result.deleted, expectedCount);
  assert.equal(result.alreadyGone, 0);
  assert.equal(result.failed, 0);
  const byProtocol: Record<string, { deleted: number; alreadyGone: number; failed: number }> = {};
  for (const e of targeted) (byProtocol[e.protocol] ??= { deleted: 0, alreadyGone: 0, failed: 0 }).deleted++;
  assert.deepEqual(result.byProtocol, byProtocol, 'deleted entries counted by protocol');
  assert.ok(result.ms >= 0);
  const after = await t.api.listConntrack();
  assert.deepEqual(sortedStable(after), sortedStable(before.filter((e) => !selected(e))));
  await assertOracleAgrees(t);
}

export function conntrackContract(name: string, make: () => Promise<ConntrackTarget>): void {
  describe(`conntrack contract: ${name}`, () => {
    it('lists what was created, with every field', async () => {
      await withTarget(make, async (t) => {
        const all = await t.api.listConntrack();
        assert.equal(all.length, FIXTURE_SIZE);
        const svc = all.find((e) => e.family === 4 && e.protocol === 'tcp' && e.reply.src === POD.v4 && e.original.dstPort === 80 && e.zone === 0);
        assert.ok(svc, 'the v4 service flow');
        assert.equal(svc.protocolNumber, 6);
        assert.equal(svc.original.src, CLIENT.v4);
        assert.equal(svc.original.dst, VIP.v4);
        assert.equal(svc.reply.dst, CLIENT.v4);
        assert.equal(svc.reply.srcPort, 8080);
        assert.equal(svc.reply.dstPort, svc.original.srcPort);
        assert.equal(svc.state, 'ESTABLISHED');
        assert.equal(svc.mark, MARK);
        assert.ok(svc.timeout > 500 && svc.timeout <= 600, `timeout ${svc.timeout}`);
        for (const flag of ['ASSURED', 'SEEN_REPLY', 'CONFIRMED']) assert.ok(svc.statusFlags.includes(flag), flag);
        assert.equal(typeof svc.id, 'number');
        const v6 = all.filter((e) => e.family === 6);
        assert.equal(v6.length, FIXTURE_SIZE / 2);
        assert.ok(v6.some((e) => e.reply.src === POD.v6 && e.protocol === 'udp' && e.state === undefined));
        const ipip = all.find((e) => e.protocol === 'ipip' && e.original.dst === POD.v6);
        assert.ok(ipip);
        assert.equal(ipip.original.srcPort, undefined);
        assert.equal(ipip.original.dst, POD.v6);
        const zoned = all.filter((e) => e.zone === 5);
        assert.equal(zoned.length, 4);
        const sctp = all.find((e) => e.protocol === 'sctp' && e.family === 4 && e.reply.src === POD.v4);
        assert.equal(sctp?.state, 'ESTABLISHED');
        assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'ids are unique');
        await assertOracleAgrees(t);
      });
    });

    it('reports the table count, max and per-CPU statistics', async () => {
      await withTarget(make, async (t) => {
        const stats = await t.api.conntrackStats();
        assert.equal(stats.count, FIXTURE_SIZE);
        assert.ok(stats.max >= stats.count);
        assert.ok(stats.perCpu.length >= 1);
        for (const cpu of stats.perCpu) {
          for (const key of ['cpu', 'found', 'invalid', 'insert', 'insertFailed', 'drop', 'earlyDrop', 'error', 'searchRestart', 'clashResolve', 'chainTooLong'] as const) {
            assert.equal(typeof cpu[key], 'number', key);
          }
        }
      });
    });

    for (const mode of ['origSrc', 'origDst', 'replySrc', 'replyDst'] as const) {
      it(`deletes exactly the ${mode} entries of a pod, IPv4 and IPv6, and nothing else`, async () => {
        await withTarget(make, async (t) => {
          const pods = new Set([POD.v4, POD.v6]);
          await deleteAndCompare(t, { addresses: [POD.v4, POD.v6], match: [mode] }, (e) => pods.has(fieldOf(e, mode)), EXPECTED[mode]);
        });
      });
    }

    it('deletes with several match modes at once (what the agent sends for a dead pod)', async () => {
      await withTarget(make, async (t) => {
        const pods = new Set([POD.v4, POD.v6]);
        const modes: ConntrackMatch[] = ['replySrc', 'origDst', 'origSrc'];
        await deleteAndCompare(t, { addresses: [POD.v4, POD.v6], match: modes }, (e) => modes.some((m) => pods.has(fieldOf(e, m))), 2 * 12);
      });
    });

    it('only one family when only its address is given', async () => {
      await withTarget(make, async (t) => {
        await deleteAndCompare(t, { addresses: [POD.v6], match: ['replySrc'] }, (e) => e.reply.src === POD.v6, EXPECTED.replySrc / 2);
      });
    });

    it('restricts to the given protocols', async () => {
      await withTarget(make, async (t) => {
        const pods = new Set([POD.v4, POD.v6]);
        await deleteAndCompare(t, { addresses: [POD.v4, POD.v6], match: ['replySrc', 'origDst'], protocols: ['udp', 'ipip'] }, (e) => (e.protocol === 'udp' && pods.has(e.reply.src)) || (e.protocol === 'ipip' && pods.has(e.original.dst)), 2 * 3);
      });
    });

    it('restricts to a zone, and deletes zoned entries (CTA_ZONE echoed)', async () => {
      await withTarget(make, async (t) => {
        const pods = new Set([POD.v4, POD.v6]);
        await deleteAndCompare(t, { addresses: [POD.v4, POD.v6], match: ['replySrc'], zone: 5 }, (e) => e.zone === 5 && pods.has(e.reply.src), 2);
      });
    });

    it('zone 0 leaves the zoned entries', async () => {
      await withTarget(make, async (t) => {
        const pods = new Set([POD.v4, POD.v6]);
        await deleteAndCompare(t, { addresses: [POD.v4, POD.v6], match: ['replySrc'], zone: 0 }, (e) => e.zone === 0 && pods.has(e.reply.src), EXPECTED.replySrc - 2);
      });
    });

    it('matches any spelling of an IPv6 address', async () => {
      await withTarget(make, async (t) => {
        await deleteAndCompare(t, { addresses: ['FD00:244:1:0:0:0:0:10'], match: ['replySrc'] }, (e) => e.reply.src === POD.v6, EXPECTED.replySrc / 2);
      });
    });

    it('dryRun counts and deletes nothing', async () => {
      await withTarget(make, async (t) => {
        const before = await t.api.listConntrack();
        const result = await t.api.deleteConntrack({ addresses: [POD.v4, POD.v6], match: ['replySrc'], dryRun: true });
        assert.deepEqual({ ...result, ms: 0 }, { scanned: FIXTURE_SIZE, matched: EXPECTED.replySrc, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 });
        assert.deepEqual(sortedStable(await t.api.listConntrack()), sortedStable(before));
      });
    });

    it('deletes many pods in one call', async () => {
      const pods = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? `10.244.9.${i + 1}` : `fd00:244:9::${(i + 1).toString(16)}`));
      const specs: ConntrackFillSpec[] = pods.map((pod, i) => ({
        protocol: 'tcp', origSrc: pod.includes(':') ? CLIENT.v6 : CLIENT.v4, srcPort: 10000 + i * 10, origDst: pod.includes(':') ? VIP.v6 : VIP.v4, dstPort: 80, replySrc: pod, count: 2,
      }));
      await withTarget(make, async (t) => {
        const dead = new Set(pods.slice(0, 20));
        await deleteAndCompare(t, { addresses: [...dead], match: ['replySrc'] }, (e) => dead.has(e.reply.src), 40);
        assert.equal((await t.api.listConntrack()).length, 20);
      }, specs);
    });

    it('deletes nothing for no addresses', async () => {
      await withTarget(make, async (t) => {
        const result = await t.api.deleteConntrack({ addresses: [], match: ['replySrc'] });
        assert.deepEqual({ ...result, ms: 0 }, { scanned: 0, matched: 0, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 });
        assert.equal((await t.api.listConntrack()).length, FIXTURE_SIZE);
      });
    });

    it('lists with filters and a limit', async () => {
      await withTarget(make, async (t) => {
        const pod4 = await t.api.listConntrack({ addresses: [POD.v4], match: ['replySrc'] });
        assert.equal(pod4.length, EXPECTED.replySrc / 2);
        assert.ok(pod4.every((e) => e.reply.src === POD.v4));
        assert.equal((await t.api.listConntrack({ protocols: ['sctp'] })).length, 4);
        assert.equal((await t.api.listConntrack({ zone: 5 })).length, 4);
        assert.equal((await t.api.listConntrack({ addresses: [POD.v4, POD.v6], match: ['replySrc'], protocols: ['tcp'], zone: 0 })).length, 2 * 5);
        assert.equal((await t.api.listConntrack({ limit: 3 })).length, 3);
        assert.equal((await t.api.listConntrack({ limit: 0 })).length, 0);
      });
    });

    it('deleteConntrackEntries deletes exactly the given entries (both families, every protocol, zoned), counted by protocol', async () => {
      await withTarget(make, async (t) => {
        const before = await t.api.listConntrack();
        const pods = new Set([POD.v4, POD.v6]);
        // One entry to the pod (by reply source) of every family, protocol and zone: siblings with the same address stay.
        const groups = new Map<string, ConntrackEntry>();
        for (const e of before.filter((x) => pods.has(x.reply.src)).sort((x, y) => (entryKey(x) < entryKey(y) ? -1 : 1))) {
          const group = `${e.family}|${e.protocol}|${e.zone}`;
          if (!groups.has(group)) groups.set(group, e);
        }
        const chosen = [...groups.values()];
        const keys = new Set(chosen.map(entryKey));
        assert.equal(chosen.length, 2 * 5, 'tcp, udp, sctp, ipip and zoned tcp, both families');
        const expected: Record<string, { deleted: number; alreadyGone: number; failed: number }> = {};
        for (const e of chosen) (expected[e.protocol] ??= { deleted: 0, alreadyGone: 0, failed: 0 }).deleted++;
        const result = await t.api.deleteConntrackEntries(chosen);
        assert.deepEqual({ ...result, ms: 0 }, { deleted: chosen.length, alreadyGone: 0, failed: 0, byProtocol: expected, ms: 0 });
        assert.ok(result.ms >= 0);
        const after = await t.api.listConntrack();
        assert.deepEqual(sortedStable(after), sortedStable(before.filter((e) => !keys.has(entryKey(e)))));
        await assertOracleAgrees(t);
        // Again: all already gone, nothing else touched.
        const again = await t.api.deleteConntrackEntries(chosen);
        assert.deepEqual({ deleted: again.deleted, alreadyGone: again.alreadyGone, failed: again.failed }, { deleted: 0, alreadyGone: chosen.length, failed: 0 });
        assert.equal((await t.api.listConntrack()).length, after.length);
      });
    });

    it('deleteConntrackEntries leaves an entry whose id no longer matches (tuple reused by a newer entry), and takes a ref without id', async () => {
      await withTarget(make, async (t) => {
        const before = await t.api.listConntrack();
        const [a, b] = before.filter((e) => e.protocol === 'udp' && e.reply.src === POD.v4);
        assert.ok(a !== undefined && b !== undefined);
        const wrongId = { family: a.family, protocolNumber: a.protocolNumber, original: a.original, zone: a.zone, id: (a.id + 1) >>> 0 === b.id ? (a.id + 7) >>> 0 : (a.id + 1) >>> 0 };
        const noId = { family: b.family, protocolNumber: b.protocolNumber, original: { src: b.original.src, dst: b.original.dst, srcPort: b.original.srcPort, dstPort: b.original.dstPort } };
        const result = await t.api.deleteConntrackEntries([wrongId, noId]);
        assert.deepEqual({ deleted: result.deleted, alreadyGone: result.alreadyGone, failed: result.failed }, { deleted: 1, alreadyGone: 1, failed: 0 });
        const after = await t.api.listConntrack();
        assert.ok(after.some((e) => e.id === a.id), 'the entry with another id stays');
        assert.ok(!after.some((e) => e.id === b.id));
        assert.equal(after.length, before.length - 1);
      });
    });

    it('deleteConntrackEntries: nothing for no entries; EINVAL for incomplete tuples, and nothing deleted', async () => {
      await withTarget(make, async (t) => {
        assert.deepEqual({ ...(await t.api.deleteConntrackEntries([])), ms: 0 }, { deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 });
        const [good] = (await t.api.listConntrack()).filter((e) => e.protocol === 'tcp');
        assert.ok(good);
        const bad: unknown[] = [
          { family: 4, protocolNumber: 6, original: { src: CLIENT.v4, dst: VIP.v4 } }, // tcp without ports
          { family: 4, protocolNumber: 6 }, // no tuple at all: would be a table flush
          { family: 6, protocolNumber: 17, original: { src: CLIENT.v4, dst: VIP.v4, srcPort: 1, dstPort: 53 } }, // family mismatch
          { family: 4, protocolNumber: 1, original: { src: CLIENT.v4, dst: VIP.v4 } }, // icmp without id/type/code
          { family: 4, protocolNumber: 58, original: { src: CLIENT.v4, dst: VIP.v4, icmpType: 128, icmpCode: 0, icmpId: 1 } }, // icmpv6 in IPv4
          { family: 4, protocolNumber: 300, original: { src: CLIENT.v4, dst: VIP.v4 } },
          { family: 4, protocolNumber: 17, original: { src: CLIENT.v4, dst: VIP.v4, srcPort: 1, dstPort: 53 }, zone: 70000 },
          { family: 5, protocolNumber: 4, original: { src: CLIENT.v4, dst: VIP.v4 } },
          { family: 4, protocolNumber: 4, original: { src: 'pod-a', dst: VIP.v4 } },
        ];
        for (const entry of bad) {
          await assert.rejects(t.api.deleteConntrackEntries([good, entry] as never), (error: unknown) => error instanceof NetlinkError && error.code === 'EINVAL' && error.op === 'deleteConntrackEntries', JSON.stringify(entry));
        }
        await assert.rejects(t.api.deleteConntrackEntries(good as never), (error: unknown) => error instanceof NetlinkError && error.code === 'EINVAL');
        assert.equal((await t.api.listConntrack()).length, FIXTURE_SIZE, 'a rejected call deletes nothing, not even its valid entries');
      });
    });

    it('scanDnatEntries returns only DNAT\'ed entries whose target no owned target covers (exact, any port, any protocol, IPv6 spellings)', async () => {
      const c4 = CLIENT.v4;
      const dnat = (target: string, port: number, count: number, protocol: 'udp' | 'tcp' = 'udp', srcPort = 10000): ConntrackFillSpec => ({
        protocol, origSrc: target.includes(':') ? CLIENT.v6 : c4, srcPort, origDst: target.includes(':') ? VIP.v6 : VIP.v4, dstPort: port, replySrc: target, replySrcPort: port, count, dnat: true,
      });
      const specs: ConntrackFillSpec[] = [
        dnat('10.244.5.1', 53, 2, 'udp', 10000), // owned: udp/53 exactly
        dnat('10.244.5.2', 53, 2, 'udp', 11000), // candidate: the address is owned on tcp/8080 only
        dnat('10.244.5.2', 8080, 1, 'tcp', 12000), // owned: tcp/8080
        dnat('10.244.5.3', 80, 1, 'tcp', 13000), // owned: tcp, every port
        dnat('10.244.5.4', 53, 1, 'udp', 14000), // owned: every protocol and port
        dnat('fd00:244:5::9', 53, 1, 'udp', 15000), // owned (spelled differently below)
        dnat('10.244.5.7', 53, 3, 'udp', 16000), // candidate: never owned
        { protocol: 'udp', origSrc: c4, srcPort: 17000, origDst: '10.244.5.7', dstPort: 53, count: 1 }, // not NAT'ed
      ];
      await withTarget(make, async (t) => {
        const ownedTargets = [
          { address: '10.244.5.1', protocol: 'udp' as const, port: 53 },
          { address: '10.244.5.2', protocol: 'tcp' as const, port: 8080 },
          { address: '10.244.5.3', protocol: 'tcp' as const },
          { address: '10.244.5.4' },
          { address: 'FD00:244:5:0:0:0:0:9', protocol: 'udp' as const, port: 53 },
        ];
        const all = await t.api.listConntrack();
        assert.equal(all.filter((e) => e.statusFlags.includes('DST_NAT')).length, 11, 'the fill made real DNAT bindings');
        const result = await t.api.scanDnatEntries({ ownedTargets });
        assert.deepEqual({ scanned: result.scanned, notNat: result.notNat, owned: result.owned }, { scanned: 12, notNat: 1, owned: 6 });
        assert.deepEqual(result.entries.map((e) => `${e.protocol} ${e.reply.src}:${e.reply.srcPort ?? ''}`).sort(), ['udp 10.244.5.2:53', 'udp 10.244.5.2:53', 'udp 10.244.5.7:53', 'udp 10.244.5.7:53', 'udp 10.244.5.7:53']);
        assert.deepEqual(sortedStable(result.entries), sortedStable(all.filter((e) => result.entries.some((r) => r.id === e.id))), 'candidates carry every field, as listConntrack');
        assert.equal((await t.api.scanDnatEntries({ ownedTargets: [] })).entries.length, 11);
        // The same targets with the IPv4 ones as numbers (a.b.c.d = a<<24|b<<16|c<<8|d), several to a group, signed or not.
        const n = (a: string): number => a.split('.').reduce((v, part) => v * 256 + Number(part), 0);
        const grouped = await t.api.scanDnatEntries({ ownedTargets: [
          { ipv4: Int32Array.of(n('10.244.5.1') | 0, n('10.244.9.9') | 0), protocol: 'udp', port: 53 },
          { ipv4: Uint32Array.of(n('10.244.5.2')), protocol: 'tcp', port: 8080 },
          { ipv4: Int32Array.of(n('10.244.5.3') | 0), protocol: 'tcp' },
          { ipv4: Uint32Array.of(n('10.244.5.4')) },
          { ipv4: new Int32Array(0), protocol: 'udp', port: 9 },
          { address: 'FD00:244:5:0:0:0:0:9', protocol: 'udp', port: 53 },
        ] });
        assert.deepEqual({ scanned: grouped.scanned, notNat: grouped.notNat, owned: grouped.owned }, { scanned: 12, notNat: 1, owned: 6 });
        assert.deepEqual(grouped.entries.map((e) => e.id).sort(), result.entries.map((e) => e.id).sort());
        assert.equal((await t.api.scanDnatEntries({ ownedTargets, limit: 2 })).entries.length, 2);
        // streamed: the same candidates in batches of 2 (2, 2, then the rest), nothing in entries
        const batches: Array<{ pass: number; ids: number[] }> = [];
        const streamed = await t.api.scanDnatEntries({ ownedTargets, batchSize: 2, onEntries: (entries, pass) => batches.push({ pass, ids: entries.map((e) => e.id) }) });
        assert.deepEqual(streamed.entries, []);
        assert.deepEqual({ scanned: streamed.scanned, notNat: streamed.notNat, owned: streamed.owned, pass: streamed.pass }, { scanned: 12, notNat: 1, owned: 6, pass: 0 });
        assert.deepEqual(batches.map((b) => [b.pass, b.ids.length]), [[0, 2], [0, 2], [0, 1]]);
        assert.deepEqual(batches.flatMap((b) => b.ids).sort(), result.entries.map((e) => e.id).sort());
        const limited: number[] = [];
        await t.api.scanDnatEntries({ ownedTargets, limit: 3, batchSize: 2, onEntries: (entries) => limited.push(entries.length) });
        assert.deepEqual(limited, [2, 1], 'limit counts streamed candidates');
        // an onEntries that throws ends the scan with its error; the handle goes on working
        await assert.rejects(t.api.scanDnatEntries({ ownedTargets, batchSize: 1, onEntries: () => { throw new Error('consumer failed'); } }), /consumer failed/);
        assert.equal((await t.api.scanDnatEntries({ ownedTargets })).entries.length, 5);
        for (const bad of [{ ownedTargets: [{ address: 'pod' }] }, { ownedTargets: [{ address: '10.0.0.1', port: 53 }] }, { ownedTargets: [{ address: '10.0.0.1', protocol: 'quic' }] }, { ownedTargets: '10.0.0.1' }, { ownedTargets: [{ ipv4: [167772161] }] }, { ownedTargets: [{ ipv4: Float64Array.of(1) }] }, { ownedTargets: [{ ipv4: Int32Array.of(1), port: 53 }] }, { ownedTargets: [], limit: -1 }, { ownedTargets: [], onEntries: 'log' }, { ownedTargets: [], onEntries: () => undefined, batchSize: 0 }]) {
          await assert.rejects(t.api.scanDnatEntries(bad as never), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL' && e.op === 'scanDnatEntries', JSON.stringify(bad));
        }
      }, specs);
    });

    it('rejects bad arguments with EINVAL and changes nothing', async () => {
      await withTarget(make, async (t) => {
        const bad: unknown[] = [
          { addresses: ['10.0.0.300'], match: ['replySrc'] },
          { addresses: ['pod-a'], match: ['replySrc'] },
          { addresses: [POD.v4], match: ['replyDestination'] },
          { addresses: [POD.v4], match: [] },
          { addresses: [POD.v4] },
          { addresses: POD.v4, match: ['replySrc'] },
          { addresses: [POD.v4], match: ['replySrc'], zone: 70000 },
          { addresses: [POD.v4], match: ['replySrc'], zone: -1 },
          { addresses: [POD.v4], match: ['replySrc'], protocols: ['quic'] },
          { addresses: [POD.v4], match: ['replySrc'], dryRun: 'yes' },
        ];
        for (const options of bad) {
          await assert.rejects(t.api.deleteConntrack(options as never), (error: unknown) => error instanceof NetlinkError && error.code === 'EINVAL' && error.op === 'deleteConntrack', JSON.stringify(options));
        }
        await assert.rejects(t.api.listConntrack({ limit: -1 }), (error: unknown) => error instanceof NetlinkError && error.code === 'EINVAL');
        await assert.rejects(t.api.listConntrack({ limit: 1.5 }), (error: unknown) => error instanceof NetlinkError && error.code === 'EINVAL');
        assert.equal((await t.api.listConntrack()).length, FIXTURE_SIZE);
      });
    });
  });
}
