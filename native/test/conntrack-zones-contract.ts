/**
 * Directional conntrack zones (`conntrack --orig-zone` / `--reply-zone`, as OVS/OVN CNIs make
 * them, and `--zone` for both directions), against the kernel and the in-memory stand-in:
 * listConntrack says the zone per direction; the table pass, deleteConntrackEntries (what
 * `delete --entries` and the stale deletion send) delete every kind in IPv4 and IPv6; an
 * ENOENT counts as alreadyGone only when the entry is really gone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConntrackFillSpec } from 'netlink-native/testing';
import type { ConntrackEntry, ConntrackEntryRef } from 'netlink-native/types';
import { entryRef } from '../../src/stale/entry.js';
import type { ConntrackTarget } from './conntrack-contract.js';

export const ZONE_CLIENT = { v4: '10.251.0.1', v6: 'fd00:251::1' };
export const ZONE_SERVER = { v4: '10.251.0.2', v6: 'fd00:251::2' };

/** Per family: an original-only zone 6, a reply-only zone 7 and a both-direction zone 8. */
export const ZONE_KINDS = [
  { direction: 'original', zone: 6, origZone: 6, replyZone: 0, sport: 2002 },
  { direction: 'reply', zone: 7, origZone: 0, replyZone: 7, sport: 2003 },
  { direction: 'both', zone: 8, origZone: 8, replyZone: 8, sport: 2004 },
] as const;

export function zonedSpecs(dnat = false): ConntrackFillSpec[] {
  return (['v4', 'v6'] as const).flatMap((f) =>
    ZONE_KINDS.map((k): ConntrackFillSpec => ({
      protocol: 'tcp', origSrc: ZONE_CLIENT[f], origDst: ZONE_SERVER[f], srcPort: k.sport, dstPort: 80, state: 'ESTABLISHED', timeout: 600,
      zone: k.zone, zoneDirection: k.direction, ...(dnat ? { dnat: true, replySrc: ZONE_SERVER[f], replySrcPort: 8080 } : {}),
    })),
  );
}

function zonesOf(entries: ConntrackEntry[]): string[] {
  return entries.map((e) => `${e.family} ${e.original.srcPort} zone=${e.zone} orig=${e.origZone} reply=${e.replyZone}`).sort();
}

const EXPECTED = [4, 6].flatMap((f) => ZONE_KINDS.map((k) => `${f} ${k.sport} zone=${k.zone} orig=${k.origZone} reply=${k.replyZone}`)).sort();

async function filledWithZones(make: () => Promise<ConntrackTarget>, dnat = false): Promise<ConntrackTarget> {
  const t = await make();
  const r = await t.fill(zonedSpecs(dnat));
  assert.equal(r.created, 6, `created ${JSON.stringify(r)}`);
  return t;
}

async function withZones(make: () => Promise<ConntrackTarget>, body: (t: ConntrackTarget) => Promise<void>, dnat = false): Promise<void> {
  const t = await filledWithZones(make, dnat);
  try {
    await body(t);
  } finally {
    await t.close();
  }
}

export function conntrackZonesContract(name: string, make: () => Promise<ConntrackTarget>): void {
  describe(`conntrack zones contract: ${name}`, () => {
    it('lists each entry\'s zone per direction', async () => {
      await withZones(make, async (t) => {
        assert.deepEqual(zonesOf(await t.api.listConntrack()), EXPECTED);
        // --zone filters on the zone id, whatever its direction
        assert.deepEqual((await t.api.listConntrack({ zone: 7 })).map((e) => e.replyZone), [7, 7]);
      });
    });

    it('the table pass deletes original-only, reply-only and both-direction zones (IPv4 and IPv6)', async () => {
      await withZones(make, async (t) => {
        const r = await t.api.deleteConntrack({ addresses: [ZONE_CLIENT.v4, ZONE_CLIENT.v6], match: ['origSrc'] });
        assert.deepEqual([r.matched, r.deleted, r.alreadyGone, r.failed], [6, 6, 0, 0]);
        assert.deepEqual(await t.api.listConntrack(), []);
      });
    });

    it('deleteConntrackEntries with what listConntrack gave deletes every kind; again: all already gone', async () => {
      await withZones(make, async (t) => {
        const listed = await t.api.listConntrack();
        const r = await t.api.deleteConntrackEntries(listed);
        assert.deepEqual([r.deleted, r.alreadyGone, r.failed], [6, 0, 0]);
        assert.deepEqual(await t.api.listConntrack(), []);
        const again = await t.api.deleteConntrackEntries(listed);
        assert.deepEqual([again.deleted, again.alreadyGone, again.failed], [0, 6, 0]);
      });
    });

    it('an ENOENT for an entry still present (a reply-only zone named as a both-direction zone) is failed, not alreadyGone', async () => {
      await withZones(make, async (t) => {
        const listed = await t.api.listConntrack();
        // An entries file of an older version: `zone` alone, no direction.
        const legacy: ConntrackEntryRef[] = listed.map((e) => ({ family: e.family, protocolNumber: e.protocolNumber, original: e.original, zone: e.zone, id: e.id }));
        const r = await t.api.deleteConntrackEntries(legacy);
        assert.deepEqual([r.deleted, r.alreadyGone, r.failed], [4, 0, 2]);
        assert.deepEqual(zonesOf(await t.api.listConntrack()), EXPECTED.filter((line) => line.includes('orig=0 ')));
        // With origZone said, the lookup is exact: no entry of that tuple in original-direction
        // zone 7 exists (a different entry, for the kernel), so it is already gone, and the
        // reply-zone entries stay untouched.
        const wrong = (await t.api.listConntrack()).map((e) => ({ ...e, origZone: 7 }));
        const w = await t.api.deleteConntrackEntries(wrong);
        assert.deepEqual([w.deleted, w.alreadyGone, w.failed], [0, 2, 0]);
        assert.equal((await t.api.listConntrack()).length, 2);
      });
    });

    it('the stale deletion (scanDnatEntries -> entryRef -> deleteConntrackEntries) deletes every kind', async () => {
      await withZones(make, async (t) => {
        const scan = await t.api.scanDnatEntries({ ownedTargets: [] });
        assert.equal(scan.entries.length, 6);
        assert.deepEqual(zonesOf(scan.entries), EXPECTED);
        const r = await t.api.deleteConntrackEntries(scan.entries.map(entryRef));
        assert.deepEqual([r.deleted, r.alreadyGone, r.failed], [6, 0, 0]);
        assert.deepEqual(await t.api.listConntrack(), []);
      }, true);
    });
  });
}
