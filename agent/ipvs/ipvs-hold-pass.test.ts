/**
 * A full pass compares with the holds only the servers of addresses it may concern (a draining
 * pod's, a held server's), not the whole table it reads. What that must not lose, over random
 * tables and random steps (drains, Ready again, pods gone, the proxy resetting, deleting and
 * adding servers; full and held passes, syncs and the fast path in any order): after a full
 * pass or a sync every server of a draining pod is at weight 0 and every held server of a
 * draining pod is present at weight 0 (put back if the proxy deleted it), and no pass ever
 * zeroes or adds a server of a pod that does not drain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { MemoryIpvs } from 'netlink-native/memory';
import type { IpvsServiceKey } from 'netlink-native/types';
import { formatServiceKey } from 'netlink-native/ipvs-keys';
import { IpvsHold, type DrainingPod } from './ipvs-hold.js';

const logger = pino({ level: 'silent' });
const PODS = 6;
const SERVICES = 4;
const serviceKey = (s: number): IpvsServiceKey => ({ family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 + s });
const address = (i: number): string => `10.2.0.${String(i + 1)}`;

type Step =
  | { op: 'drain' | 'ready' | 'gone'; pod: number }
  | { op: 'reset' | 'delete' | 'add'; service: number; pod: number }
  | { op: 'pass'; kind: 'full' | 'held' | 'sync' | 'changed' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom('drain' as const, 'ready' as const, 'gone' as const), pod: fc.integer({ min: 0, max: PODS - 1 }) }),
  fc.record({ op: fc.constantFrom('reset' as const, 'delete' as const, 'add' as const), service: fc.integer({ min: 0, max: SERVICES - 1 }), pod: fc.integer({ min: 0, max: PODS - 1 }) }),
  fc.record({ op: fc.constant('pass' as const), kind: fc.constantFrom('full' as const, 'held' as const, 'sync' as const, 'changed' as const) }),
);

const tableArb = fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: PODS, maxLength: PODS }), { minLength: SERVICES, maxLength: SERVICES });

async function weightOf(ipvs: MemoryIpvs, s: number, pod: number): Promise<number | undefined> {
  return (await ipvs.listDestinations(serviceKey(s))).find((d) => d.address === address(pod))?.weight;
}

test('a full pass that keeps only the servers it may concern holds, restores and leaves alone as one that kept them all', async () => {
  await fc.assert(
    fc.asyncProperty(tableArb, fc.array(fc.boolean(), { minLength: SERVICES * PODS, maxLength: SERVICES * PODS }), fc.array(stepArb, { maxLength: 40 }), async (weights, present, steps) => {
      const ipvs = new MemoryIpvs();
      for (let s = 0; s < SERVICES; s++) {
        await ipvs.addService({ key: serviceKey(s), scheduler: 'mh' });
        for (let p = 0; p < PODS; p++) if (present[s * PODS + p] === true) await ipvs.addDestination(serviceKey(s), { address: address(p), port: 8080, weight: weights[s]?.[p] ?? 1 });
      }
      const hold = new IpvsHold({ ipvs, logger });
      await hold.refreshIndex();
      const draining = new Set<number>();
      const serving = new Set<string>();
      const plan = (): { draining: DrainingPod[]; servingUids: Set<string> } => ({
        draining: [...draining].map((p) => ({ uid: `u${String(p)}`, key: `ns/p${String(p)}`, ips: [address(p)] })),
        servingUids: serving,
      });
      for (const step of steps) {
        if (step.op === 'drain') {
          draining.add(step.pod);
          serving.delete(`u${String(step.pod)}`);
        } else if (step.op === 'ready' || step.op === 'gone') {
          draining.delete(step.pod);
          if (step.op === 'ready') serving.add(`u${String(step.pod)}`);
        } else if (step.op === 'pass') {
          ipvs.history.length = 0;
          const { draining: list, servingUids } = plan();
          if (step.kind === 'full' || step.kind === 'held') await hold.reassert(plan, step.kind);
          else if (step.kind === 'sync') await hold.sync(list, servingUids);
          else await hold.syncChanged(list, servingUids);
          for (const h of ipvs.history) {
            if (h.op === 'deleteDestination' || h.op === 'setDestinationWeight' && h.weight !== 0) continue;
            const pod = Number(/\.(\d+)$/.exec(h.destination?.address ?? '')?.[1]) - 1;
            assert.ok(draining.has(pod), `${h.op} ${String(h.weight)} of ${String(h.destination?.address)}, whose pod does not drain`);
          }
          // A `held` pass reads only the services the index and the holds name, from the last
          // full scan: a server of a draining pod no scan has seen waits for the next full pass,
          // and one the proxy deleted since is re-added by the pass after the hold.
          if (step.kind === 'changed' || step.kind === 'held') continue;
          for (const p of draining) {
            for (let s = 0; s < SERVICES; s++) {
              const w = await weightOf(ipvs, s, p);
              assert.ok(w === undefined || w === 0, `${address(p)} in ${formatServiceKey(serviceKey(s))} drains at weight ${String(w)}`);
            }
          }
          for (const h of hold.list()) {
            if (!draining.has(Number(h.destination.address.split('.')[3]) - 1)) continue;
            assert.equal(await weightOf(ipvs, h.service.port === undefined ? 0 : h.service.port - 80, Number(h.destination.address.split('.')[3]) - 1), 0, `held ${h.destination.address} of ${formatServiceKey(h.service)} is back at 0`);
          }
        } else if ('service' in step) {
          const key = serviceKey(step.service);
          const w = await weightOf(ipvs, step.service, step.pod);
          if (step.op === 'add' && w === undefined) await ipvs.addDestination(key, { address: address(step.pod), port: 8080, weight: 2 });
          else if (step.op === 'reset' && w !== undefined) ipvs.proxySetWeight(key, { address: address(step.pod), port: 8080 }, 2);
          else if (step.op === 'delete' && w !== undefined) ipvs.proxyDeleteDestination(key, { address: address(step.pod), port: 8080 });
        }
      }
    }),
    { numRuns: 300 },
  );
});
