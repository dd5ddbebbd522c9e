/**
 * The IPVS hold, on every node: while a pod drains, every IPVS real server whose address is
 * one of its IPs (address/port and fwmark services alike) stays present at weight 0.
 *
 * - Weight 0 is set by EDITING the existing entry (`setDestinationWeight`), never by delete +
 *   re-add: in the `mh`/`sh` schedulers a weight-0 server keeps its Maglev lookup slots only
 *   when edited (docs/design/contract.md, net/netfilter/ipvs/ip_vs_mh.c).
 * - Every `sync()` (on each plan change and every hold interval) re-asserts: a held server
 *   whose weight the proxy reset is edited back to 0 (restore `weight`); one the proxy
 *   deleted is re-added at its ORIGINAL weight and then edited to 0, so the Maglev table is
 *   rebuilt as it was before (restore `readd`). Each restore is counted.
 * - Release: when the pod is gone, only servers the agent itself re-created are deleted;
 *   the others are left as the proxy left them. When the pod is Ready again, servers still
 *   at the weight 0 we set get their original weight back and the agent stops interfering.
 *
 * Every IPVS call goes through one queue, so a release never interleaves with a pass.
 *
 * This file is the passes; what they keep and do is beside it: the held servers
 * (`held-server.ts`, `hold-registry.ts`), the address index (`address-index.ts`), the call
 * queue (`call-queue.ts`), the reads (`ipvs-scan.ts`) and the edits (`hold-edits.ts`).
 */
import type { Logger } from 'pino';
import type { IpvsApi, IpvsService, IpvsServiceKey } from 'netlink-native/types';
import { mapLimit } from '../../src/map-limit.js';
import { AddressIndex, AddressIndexBuilder } from './address-index.js';
import { CallQueue } from './call-queue.js';
import { formatServiceKey } from 'netlink-native/ipvs-keys';
import { heldId, newHold, covers, recordsOrder, type DrainingPod, type HeldServer, type RestoreAction, type ServingUids } from './held-server.js';
import { readd, release, setZeros, type HoldEditsContext } from './hold-edits.js';
import { HoldRegistry } from './hold-registry.js';
import { HoldReport } from './hold-report.js';
import { visitServers, type ListedService } from './ipvs-scan.js';

/**
 * What a scan hands the pass: every service it listed (a held server the proxy deleted is
 * re-added only into a service still there), and of those, the servers that may concern a
 * hold (`kept`: an address of a draining pod or of a held server), not the whole table.
 */
interface ScanResult {
  services: readonly IpvsService[];
  kept: ListedService[];
}

export type { DrainingPod, HeldServer, RestoreAction, ServingUids } from './held-server.js';

export interface HoldHooks {
  restored?(action: RestoreAction, held: HeldServer): void;
  /** The set of held servers changed (persist it). */
  changed?(): void;
}

export interface IpvsHoldOptions {
  ipvs: IpvsApi;
  logger: Logger;
  hooks?: HoldHooks;
  /** Parallel netlink calls in one pass (the addon runs them off the event loop). */
  concurrency?: number;
  /** Services never held (flow pinning's twin services: their draining pods must keep their weight). */
  skipService?: (key: IpvsServiceKey) => boolean;
}

/**
 * What a re-assert pass reads: `full`, every service (finds a draining pod's servers wherever
 * they are); `held`, only the services that hold or may hold a draining pod's servers
 * (servicesToReassert): work in proportion to the drains, not to the node's services.
 */
export type ReassertScope = 'full' | 'held';

export class IpvsHold {
  private readonly holds = new HoldRegistry();
  private readonly queue = new CallQueue();
  /**
   * Refreshed by every scan and by `refreshIndex()` (the agent: every 10 s while idle). A known
   * server the proxy deleted meanwhile is held and re-added: the proxy deletes at the moment the
   * drain begins, often before this hold.
   */
  private readonly index = new AddressIndex();
  private refreshing = false;
  private readonly edits: HoldEditsContext;

  constructor(private readonly options: IpvsHoldOptions) {
    this.edits = { ipvs: options.ipvs, logger: options.logger, restored: (action, held) => options.hooks?.restored?.(action, held) };
  }

  /** Every held server (for the state file and metrics). */
  list(): HeldServer[] {
    return this.holds.list();
  }

  get size(): number {
    return this.holds.size;
  }

  /** Resumes holds from the state file (before the first sync). */
  resume(held: readonly HeldServer[]): void {
    this.holds.resume(held);
  }

  /**
   * Merges holds another agent instance handed over (docs/handover.md): a server not held here
   * is held as it says; one held here keeps its hold, with the original weight the other saw
   * when this one only assumed it (first seen at 0). Returns how many holds it added or changed.
   */
  adopt(held: readonly HeldServer[]): number {
    const changed = this.holds.adopt(held);
    if (changed > 0) this.options.hooks?.changed?.();
    return changed;
  }

  /** Resolves once the IPVS calls queued so far are done (a handover waits for it before sending its holds). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /**
   * One pass: releases pods no longer draining (`servingUids`: Ready again; any other: gone),
   * then holds every server of every draining pod at weight 0. Resolves when IPVS is done.
   */
  sync(draining: readonly DrainingPod[], servingUids: ServingUids): Promise<void> {
    return this.queue.run(async () => {
      await this.releaseNotDraining(draining, servingUids);
      await this.holdKnown(draining);
      await this.holdAll(draining);
    });
  }

  /**
   * The interval's full pass without holding up the fast path: the scan of every service (the
   * expensive part: one netlink dump per service) runs beside the queue, like `refreshIndex`;
   * only the edits it finds needed are queued, and they are computed from `current()` (the
   * pods to hold when the edits run, not when the scan began) so a pod released meanwhile is
   * not held again. A server held after the scan began is trusted (the scan's weight for it is
   * older than the edit). Resolves to whether it read every service (and rebuilt the address
   * index): a full pass with something to hold.
   */
  async reassert(current: () => { draining: readonly DrainingPod[]; servingUids: ServingUids }, scope: ReassertScope = 'full'): Promise<{ scannedAll: boolean }> {
    if (current().draining.length === 0) {
      await this.queue.run(async () => {
        const now = current();
        await this.releaseNotDraining(now.draining, now.servingUids);
      });
      return { scannedAll: false };
    }
    const scanSeq = this.holds.beginScan();
    const atStart = current().draining;
    const listed = scope === 'full' ? await this.scan(this.holdAddresses(atStart)) : await this.scanServices(this.servicesToReassert(atStart), this.holdAddresses(atStart));
    await this.queue.run(async () => {
      const now = current();
      await this.releaseNotDraining(now.draining, now.servingUids);
      await this.holdKnown(now.draining);
      await this.holdAll(now.draining, listed, scanSeq);
    });
    return { scannedAll: scope === 'full' };
  }

  /**
   * The services a `held` pass reads: every service with a held server (the proxy may have reset
   * or deleted it) and every service the index lists a draining pod's address in (a server not
   * held yet). A server of a draining pod in a service the index does not know yet is found by
   * the next full pass (the caller's interval for those) or the index refresh before it.
   */
  private servicesToReassert(draining: readonly DrainingPod[]): Set<string> {
    const ids = new Set<string>();
    for (const h of this.holds.values()) ids.add(formatServiceKey(h.service));
    for (const pod of draining) {
      for (const ip of pod.ips) for (const { service } of this.index.at(ip)) ids.add(formatServiceKey(service.key));
    }
    return ids;
  }

  /**
   * Reads the servers of the services in `ids` only (the index and orders stay as the last full
   * scan left them); keeps those whose address is in `addresses` (ScanResult).
   */
  private async scanServices(ids: ReadonlySet<string>, addresses: ReadonlySet<string>): Promise<ScanResult> {
    const services = (await this.options.ipvs.listServices()).filter((service) => ids.has(formatServiceKey(service.key)));
    return { services, kept: await this.readKept(services, addresses, undefined) };
  }

  /**
   * The addresses (lowercased) whose servers a full pass compares with the holds: those of the
   * pods draining when it begins and of every held server. A pod that starts draining during
   * the scan is held from the index the scan leaves (holdKnown, before the pass's edits), and
   * a hold made after the scan began is newer than what the scan read of it.
   */
  private holdAddresses(draining: readonly DrainingPod[]): Set<string> {
    const addresses = new Set<string>();
    for (const pod of draining) for (const ip of pod.ips) addresses.add(ip.toLowerCase());
    for (const h of this.holds.values()) addresses.add(h.destination.address.toLowerCase());
    return addresses;
  }

  private async releaseNotDraining(draining: readonly DrainingPod[], servingUids: ServingUids): Promise<void> {
    if (this.holds.size === 0) return;
    const drainingUids = new Set<string>();
    for (const p of draining) drainingUids.add(p.uid);
    for (const uid of this.holds.podUidList()) if (!drainingUids.has(uid)) await this.releasePod(uid, servingUids.has(uid) ? 'serving' : 'gone');
  }

  /**
   * A pass proportional to what changed (the agent runs it for each watch event batch that
   * changed the pods to hold; `sync()` on the interval re-asserts everything): releases pods
   * no longer draining and edits the indexed servers of newly draining pods to weight 0, with
   * no scan of the services. Resolves to the number of newly draining pods the index knows no
   * server of: their servers (if any) are found by the next full pass, which the caller may
   * run at once.
   */
  syncChanged(draining: readonly DrainingPod[], servingUids: ServingUids): Promise<number> {
    return this.queue.run(async () => {
      await this.releaseNotDraining(draining, servingUids);
      return this.holdKnown(draining);
    });
  }

  /**
   * A full scan that only refreshes the address index (the agent calls it while idle). It
   * only reads, so it runs beside the queue: a pod that starts draining meanwhile is not
   * kept waiting behind 1,000 listDestinations calls (a stale weight in the index costs at
   * most one extra edit, and the pass's own full scan catches anything it misses).
   */
  async refreshIndex(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      await this.scan(new Set());
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Reads every service's servers and rebuilds the address index from them as it reads; keeps
   * only the servers whose address is in `addresses` (ScanResult).
   */
  private async scan(addresses: ReadonlySet<string>): Promise<ScanResult> {
    const services = await this.options.ipvs.listServices();
    const builder = new AddressIndexBuilder();
    const kept = await this.readKept(services, addresses, builder);
    this.index.replace(builder);
    return { services, kept };
  }

  /** Reads the servers of `services` (each service's into `builder`, if any) and keeps those whose address is in `addresses`. */
  private async readKept(services: readonly IpvsService[], addresses: ReadonlySet<string>, builder: AddressIndexBuilder | undefined): Promise<ListedService[]> {
    const kept: ListedService[] = [];
    await visitServers(this.options.ipvs, services, this.concurrency, (service, dests) => {
      builder?.add(service, dests);
      if (dests === undefined || addresses.size === 0) return;
      const mine = dests.filter((d) => addresses.has(d.address.toLowerCase()));
      if (mine.length > 0) kept.push({ service, dests: mine });
    });
    return kept;
  }

  /** The service's server order from the last scan, where a hold records it (`recordsOrder`). */
  private orderOf(service: IpvsService): readonly string[] | undefined {
    return recordsOrder(service) ? this.index.orderOf(formatServiceKey(service.key)) : undefined;
  }

  private get concurrency(): number {
    return this.options.concurrency ?? 8;
  }

  /** Fast path: servers of newly draining pods that the index knows, edited to 0 before any scan. */
  private async holdKnown(draining: readonly DrainingPod[]): Promise<number> {
    const zeros: HeldServer[] = [];
    let unindexed = 0;
    for (const pod of draining) {
      if (this.holds.holdsPod(pod.uid)) continue;
      if (pod.wasReady !== false && pod.ips.every((ip) => this.index.at(ip).length === 0)) unindexed += 1;
      for (const ip of pod.ips) {
        for (const { service, dest } of this.index.at(ip)) {
          if (this.options.skipService?.(service.key) === true || !covers(pod, service.key, dest)) continue;
          const id = heldId(service.key, dest);
          if (this.holds.has(id)) continue;
          const h = newHold(pod, service, dest, this.orderOf(service));
          this.holds.set(id, h);
          this.holds.markHeld(h);
          // Edited whatever weight the index remembers: the index is a snapshot, and the last
          // one may date from this pod's previous drain (weight 0 then, its original weight
          // again since the release); skipping it would leave the edit to the full scan.
          // Found missing by the edit: the proxy deleted it as the drain began (kube-router
          // deletes an unready endpoint at once on nodes without connections to it, racing
          // this hold). The index, refreshed while the pod was serving, says it was there:
          // the hold stays and the scan below re-adds it (original weight, then 0).
          zeros.push(h);
        }
      }
    }
    if (zeros.length === 0) return unindexed;
    const report = new HoldReport();
    const outcomes = await setZeros(this.edits, zeros.map((h) => ({ held: h, restore: undefined })));
    zeros.forEach((h, i) => {
      if (outcomes[i] === 'done') report.add(h);
    });
    report.log(this.options.logger);
    this.options.hooks?.changed?.();
    return unindexed;
  }

  private async holdAll(draining: readonly DrainingPod[], scanned?: ScanResult, scanSeq = Number.POSITIVE_INFINITY): Promise<void> {
    if (draining.length === 0) return; // nothing to hold: no IPVS call at all
    // Several draining endpoints may share an address (host-network pods of one node, on their own ports).
    const podOfIp = new Map<string, DrainingPod[]>();
    for (const pod of draining) {
      for (const ip of pod.ips) {
        const list = podOfIp.get(ip.toLowerCase());
        if (list === undefined) podOfIp.set(ip.toLowerCase(), [pod]);
        else list.push(pod);
      }
    }
    const { kept: listed, services } = scanned ?? await this.scan(this.holdAddresses(draining));
    const newer = (h: HeldServer): boolean => this.holds.heldAfter(h, scanSeq);
    let changed = false;
    const seen = new Set<string>();
    const work: Array<() => Promise<void>> = [];
    const zeros: Array<{ held: HeldServer; restore: RestoreAction | undefined }> = [];
    for (const { service, dests } of listed) {
      if (dests === undefined || this.options.skipService?.(service.key) === true) continue;
      for (const dest of dests) {
        const pod = podOfIp.get(dest.address.toLowerCase())?.find((p) => covers(p, service.key, dest));
        if (pod === undefined) continue;
        const id = heldId(service.key, dest);
        seen.add(id);
        const held = this.holds.get(id);
        if (held === undefined) {
          const h = newHold(pod, service, dest, this.orderOf(service));
          this.holds.set(id, h);
          changed = true;
          if (dest.weight !== 0) zeros.push({ held: h, restore: undefined });
        } else if (dest.weight !== 0 && !newer(held)) {
          zeros.push({ held, restore: 'weight' });
        }
      }
    }
    // Held servers of draining pods that the proxy deleted: re-add at the original weight, then 0.
    const present = new Map(services.map((s) => [formatServiceKey(s.key), s]));
    for (const [id, held] of this.holds.entries()) {
      if (seen.has(id) || !podOfIpHas(podOfIp, held) || newer(held)) continue;
      const service = present.get(formatServiceKey(held.service));
      if (service === undefined) continue; // the whole service is gone: nothing to re-add into
      work.push(() => readd(this.edits, held, service));
      changed = true;
    }
    const report = new HoldReport();
    const outcomes = await setZeros(this.edits, zeros);
    zeros.forEach((z, i) => {
      if (outcomes[i] === 'done' && z.restore === undefined) report.add(z.held);
    });
    await mapLimit(work, this.concurrency, (fn) => fn());
    report.log(this.options.logger);
    if (changed) this.options.hooks?.changed?.();
  }

  private async releasePod(uid: string, why: 'serving' | 'gone'): Promise<void> {
    for (const [id, held] of this.holds.entriesOf(uid)) {
      if (!(await release(this.edits, this.index, held, why))) continue;
      this.holds.delete(id);
      this.options.hooks?.changed?.();
    }
  }
}

function podOfIpHas(podOfIp: ReadonlyMap<string, readonly DrainingPod[]>, held: HeldServer): boolean {
  return podOfIp.get(held.destination.address.toLowerCase())?.some((p) => p.uid === held.podUid) === true;
}
