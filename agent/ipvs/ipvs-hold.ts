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
 */
import type { Logger } from 'pino';
import { destinationSpecOf, formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import { isCode } from './netlink-code.js';
import type { IpvsApi, IpvsDestination, IpvsDestinationKey, IpvsDestinationSpec, IpvsService, IpvsServiceKey } from 'netlink-native/types';

export interface HeldServer {
  podUid: string;
  podKey: string;
  service: IpvsServiceKey;
  scheduler: string;
  destination: IpvsDestinationKey;
  /** What it takes to re-add the server as it was (forwarding, thresholds, tunnel). */
  spec: IpvsDestinationSpec;
  /** The weight before the hold (the proxy's); 1 when first seen already at 0. */
  originalWeight: number;
  /**
   * The server was first seen already at 0 (another agent instance, or a crash, edited it
   * before this hold): `originalWeight` is the default, not a weight seen. A hold handed over
   * by the instance that saw the real weight replaces it (`adopt`). Absent: seen.
   */
  originalAssumed?: boolean;
  /** The agent re-added it after the proxy deleted it: the agent removes it on release. */
  recreated: boolean;
  /**
   * The service's servers (formatDestinationKey's `address:port`, dump order) as the last scan before this hold saw
   * them: the pre-drain list order, which flow pinning's twin copies. A proxy that deletes the
   * server and the hold that re-adds it change the kernel's order (re-added servers go to the
   * head); the mh/sh tables follow the order.
   */
  serviceOrder?: string[];
}

export type RestoreAction = 'weight' | 'readd';

export interface HoldHooks {
  restored?(action: RestoreAction, held: HeldServer): void;
  /** The set of held servers changed (persist it). */
  changed?(): void;
}

export interface DrainingPod {
  uid: string;
  key: string;
  ips: readonly string[];
  /**
   * false: the pod was never Ready (a new pod of a rollout, not Ready yet). The proxy only
   * programs Ready endpoints, so the address index not knowing its IPs is the normal case and
   * needs no scan at once (the interval's full pass holds any server it has).
   */
  wasReady?: boolean;
  /**
   * Only the real servers on these ports (and protocols: a fwmark service has none and matches
   * by port) are held: an endpoint from an EndpointSlice is held by its slice's address, port
   * and protocol, never by bare IP (a host-network endpoint's address is a node's). Absent:
   * every server with one of `ips`. Empty: none newly held, those held already stay (a hold
   * resumed from the state file before the slices are listed).
   */
  ports?: ReadonlyArray<{ port: number; protocol: string }>;
}

/** Whether `pod`'s hold covers the server `dest` of `service` (its ports, when it names them). */
function covers(pod: DrainingPod, service: IpvsServiceKey, dest: IpvsDestinationKey): boolean {
  if (pod.ports === undefined) return true;
  return pod.ports.some((p) => p.port === dest.port && (service.fwmark !== undefined || p.protocol === service.protocol));
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

/** Weight kube-proxy gives every endpoint: used as the original of a server first seen at 0. */
export const DEFAULT_ORIGINAL_WEIGHT = 1;

function heldId(service: IpvsServiceKey, dest: IpvsDestinationKey): string {
  return `${formatServiceKey(service)}>${formatDestinationKey(dest)}`;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

interface IndexedServer {
  service: IpvsService;
  dest: IpvsDestination;
}

/**
 * What a re-assert pass reads: `full`, every service (finds a draining pod's servers wherever
 * they are); `held`, only the services that hold or may hold a draining pod's servers
 * (servicesToReassert): work in proportion to the drains, not to the node's services.
 */
export type ReassertScope = 'full' | 'held';

export class IpvsHold {
  private readonly holds = new Map<string, HeldServer>();
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * Real servers by address, from the last full scan: when a pod starts draining, its known
   * servers are edited to 0 at once, before the full scan (1,000 services = 1,000 netlink
   * round trips) that catches the rest. Refreshed by every scan and by `refreshIndex()` (the
   * agent: every 10 s while idle). A known server the proxy deleted meanwhile is held and
   * re-added: the proxy deletes at the moment the drain begins, often before this hold.
   */
  private index = new Map<string, IndexedServer[]>();
  private refreshing = false;
  /** Each service's servers in dump order, from the last full scan (see HeldServer.serviceOrder). */
  private orders = new Map<string, string[]>();
  /** Counts scans and edits: a hold made after a scan began (`heldAt` > the scan's) is newer than the scan. */
  private seq = 0;
  private readonly heldAt = new WeakMap<HeldServer, number>();

  constructor(private readonly options: IpvsHoldOptions) {}

  /** Every held server (for the state file and metrics). */
  list(): HeldServer[] {
    return [...this.holds.values()];
  }

  get size(): number {
    return this.holds.size;
  }

  /** Resumes holds from the state file (before the first sync). */
  resume(held: readonly HeldServer[]): void {
    for (const h of held) this.holds.set(heldId(h.service, h.destination), { ...h });
  }

  /**
   * Merges holds another agent instance handed over (docs/handover.md): a server not held here
   * is held as it says; one held here keeps its hold, with the original weight the other saw
   * when this one only assumed it (first seen at 0). Returns how many holds it added or changed.
   */
  adopt(held: readonly HeldServer[]): number {
    let changed = 0;
    for (const h of held) {
      const id = heldId(h.service, h.destination);
      const mine = this.holds.get(id);
      if (mine === undefined) {
        this.holds.set(id, { ...h });
        changed += 1;
      } else if (mine.originalAssumed === true && h.originalAssumed !== true) {
        this.holds.set(id, { ...mine, originalWeight: h.originalWeight, spec: h.spec, originalAssumed: false, recreated: mine.recreated || h.recreated, serviceOrder: mine.serviceOrder ?? h.serviceOrder });
        changed += 1;
      }
    }
    if (changed > 0) this.options.hooks?.changed?.();
    return changed;
  }

  /** Resolves once the IPVS calls queued so far are done (a handover waits for it before sending its holds). */
  async idle(): Promise<void> {
    await this.enqueue(() => Promise.resolve());
  }

  /**
   * One pass: releases pods no longer draining (`servingUids`: Ready again; any other: gone),
   * then holds every server of every draining pod at weight 0. Resolves when IPVS is done.
   */
  sync(draining: readonly DrainingPod[], servingUids: ReadonlySet<string>): Promise<void> {
    return this.enqueue(async () => {
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
   * older than the edit).
   */
  async reassert(current: () => { draining: readonly DrainingPod[]; servingUids: ReadonlySet<string> }, scope: ReassertScope = 'full'): Promise<void> {
    if (current().draining.length === 0) {
      await this.enqueue(async () => {
        const now = current();
        await this.releaseNotDraining(now.draining, now.servingUids);
      });
      return;
    }
    const scanSeq = ++this.seq;
    const listed = scope === 'full' ? await this.scan() : await this.scanServices(this.servicesToReassert(current().draining));
    await this.enqueue(async () => {
      const now = current();
      await this.releaseNotDraining(now.draining, now.servingUids);
      await this.holdKnown(now.draining);
      await this.holdAll(now.draining, listed, scanSeq);
    });
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
      for (const ip of pod.ips) for (const { service } of this.index.get(ip.toLowerCase()) ?? []) ids.add(formatServiceKey(service.key));
    }
    return ids;
  }

  /** Reads the servers of the services in `ids` only (the index and orders stay as the last full scan left them). */
  private async scanServices(ids: ReadonlySet<string>): Promise<Awaited<ReturnType<IpvsHold['scan']>>> {
    return this.listServers((await this.options.ipvs.listServices()).filter((service) => ids.has(formatServiceKey(service.key))));
  }

  /** The servers of each of `services` (undefined for one deleted meanwhile). */
  private listServers(services: readonly IpvsService[]): Promise<Array<{ service: IpvsService; dests: IpvsDestination[] | undefined }>> {
    const { ipvs, concurrency = 8 } = this.options;
    return mapLimit(services, concurrency, async (service) => {
      try {
        return { service, dests: await ipvs.listDestinations(service.key) };
      } catch (error) {
        if (isCode(error, 'ENOENT', 'ESRCH')) return { service, dests: undefined }; // deleted meanwhile
        throw error;
      }
    });
  }

  private async releaseNotDraining(draining: readonly DrainingPod[], servingUids: ReadonlySet<string>): Promise<void> {
    if (this.holds.size === 0) return;
    const drainingUids = new Set<string>();
    for (const p of draining) drainingUids.add(p.uid);
    const release = new Set<string>();
    for (const h of this.holds.values()) if (!drainingUids.has(h.podUid)) release.add(h.podUid);
    for (const uid of release) await this.releasePod(uid, servingUids.has(uid) ? 'serving' : 'gone');
  }

  /**
   * A pass proportional to what changed (the agent runs it for each watch event batch that
   * changed the pods to hold; `sync()` on the interval re-asserts everything): releases pods
   * no longer draining and edits the indexed servers of newly draining pods to weight 0, with
   * no scan of the services. Resolves to the number of newly draining pods the index knows no
   * server of: their servers (if any) are found by the next full pass, which the caller may
   * run at once.
   */
  syncChanged(draining: readonly DrainingPod[], servingUids: ReadonlySet<string>): Promise<number> {
    return this.enqueue(async () => {
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
      await this.scan();
    } finally {
      this.refreshing = false;
    }
  }

  private async scan(): Promise<Array<{ service: IpvsService; dests: IpvsDestination[] | undefined }>> {
    const listed = await this.listServers(await this.options.ipvs.listServices());
    const index = new Map<string, IndexedServer[]>();
    for (const { service, dests } of listed) {
      for (const dest of dests ?? []) {
        const ip = dest.address.toLowerCase();
        let list = index.get(ip);
        if (list === undefined) index.set(ip, (list = []));
        list.push({ service, dest });
      }
    }
    this.index = index;
    this.orders = new Map(listed.filter((l) => l.dests !== undefined).map((l) => [formatServiceKey(l.service.key), (l.dests ?? []).map(formatDestinationKey)]));
    return listed;
  }

  /** Fast path: servers of newly draining pods that the index knows, edited to 0 before any scan. */
  private async holdKnown(draining: readonly DrainingPod[]): Promise<number> {
    const held = new Set<string>();
    for (const h of this.holds.values()) held.add(h.podUid);
    const zeros: HeldServer[] = [];
    let unindexed = 0;
    for (const pod of draining) {
      if (held.has(pod.uid)) continue;
      if (pod.wasReady !== false && pod.ips.every((ip) => (this.index.get(ip.toLowerCase()) ?? []).length === 0)) unindexed += 1;
      for (const ip of pod.ips) {
        for (const { service, dest } of this.index.get(ip.toLowerCase()) ?? []) {
          if (this.options.skipService?.(service.key) === true || !covers(pod, service.key, dest)) continue;
          const id = heldId(service.key, dest);
          if (this.holds.has(id)) continue;
          const h = this.newHold(pod, service, dest);
          this.holds.set(id, h);
          this.heldAt.set(h, ++this.seq);
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
    const outcomes = await this.setZeros(zeros.map((h) => ({ held: h, restore: undefined })));
    zeros.forEach((h, i) => {
      if (outcomes[i] === 'done') report.add(h);
    });
    report.log(this.options.logger);
    this.options.hooks?.changed?.();
    return unindexed;
  }

  private newHold(pod: DrainingPod, service: IpvsService, dest: IpvsDestination): HeldServer {
    return {
      podUid: pod.uid, podKey: pod.key, service: service.key, scheduler: service.scheduler, destination: { address: dest.address, port: dest.port, family: dest.family },
      spec: destinationSpecOf(dest), originalWeight: dest.weight > 0 ? dest.weight : DEFAULT_ORIGINAL_WEIGHT, recreated: false,
      ...(dest.weight > 0 ? {} : { originalAssumed: true }),
      serviceOrder: this.orders.get(formatServiceKey(service.key)),
    };
  }

  private enqueue<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async holdAll(draining: readonly DrainingPod[], scanned?: Awaited<ReturnType<IpvsHold['scan']>>, scanSeq = Number.POSITIVE_INFINITY): Promise<void> {
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
    const { concurrency = 8 } = this.options;
    const listed = scanned ?? await this.scan();
    const newer = (h: HeldServer): boolean => (this.heldAt.get(h) ?? 0) > scanSeq;
    const services = listed.map((l) => l.service);
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
          const h = this.newHold(pod, service, dest);
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
    for (const [id, held] of this.holds) {
      if (seen.has(id) || !podOfIpHas(podOfIp, held) || newer(held)) continue;
      const service = present.get(formatServiceKey(held.service));
      if (service === undefined) continue; // the whole service is gone: nothing to re-add into
      work.push(() => this.readd(held, service));
      changed = true;
    }
    const report = new HoldReport();
    const outcomes = await this.setZeros(zeros);
    zeros.forEach((z, i) => {
      if (outcomes[i] === 'done' && z.restore === undefined) report.add(z.held);
    });
    await mapLimit(work, concurrency, (fn) => fn());
    report.log(this.options.logger);
    if (changed) this.options.hooks?.changed?.();
  }

  /**
   * Edits held servers to weight 0, all in one setDestinationWeights call (the addon: one worker
   * round trip for thousands of servers). `restore` says why an already-held server is edited
   * again (logged, counted). New holds are logged by the caller, one line per pod (HoldReport).
   */
  private async setZeros(items: ReadonlyArray<{ held: HeldServer; restore: RestoreAction | undefined }>): Promise<Array<'done' | 'missing' | 'failed'>> {
    if (items.length === 0) return [];
    const { logger } = this.options;
    let results: Array<Error | undefined>;
    try {
      results = await this.options.ipvs.setDestinationWeights(items.map(({ held }) => ({ service: held.service, destination: held.destination, weight: 0 })));
    } catch (error) {
      if (isCode(error, 'EIPVSUNAVAILABLE')) throw error;
      const pods = [...new Set(items.map(({ held }) => held.podKey))];
      logger.warn({ pods, err: error, servers: items.length }, 'ipvs: could not set weight 0; retried next interval');
      return items.map(() => 'failed');
    }
    return items.map(({ held, restore }, i) => {
      const error = results[i];
      if (error === undefined) {
        if (restore !== undefined) {
          logger.info({ pod: held.podKey, ip: held.destination.address, service: formatServiceKey(held.service) }, 'ipvs: the proxy reset a held server\'s weight; back to 0');
          this.options.hooks?.restored?.(restore, held);
        }
        return 'done';
      }
      if (isCode(error, 'ENOENT', 'ESRCH')) return 'missing';
      logger.warn({ pod: held.podKey, ip: held.destination.address, err: error, service: formatServiceKey(held.service) }, 'ipvs: could not set weight 0; retried next interval');
      return 'failed';
    });
  }

  private async readd(held: HeldServer, service: IpvsService): Promise<void> {
    const { ipvs, logger } = this.options;
    const log = logger.child({ pod: held.podKey, ip: held.destination.address });
    try {
      await ipvs.addDestination(service.key, { ...held.spec, weight: held.originalWeight });
      held.recreated = true;
      await ipvs.setDestinationWeight(service.key, held.destination, 0);
      log.info({ service: formatServiceKey(held.service), scheduler: service.scheduler, originalWeight: held.originalWeight }, 'ipvs: the proxy deleted a held server; re-added at its original weight and edited to 0');
      this.options.hooks?.restored?.('readd', held);
    } catch (error) {
      if (isCode(error, 'EEXIST')) return; // the proxy re-added it meanwhile: next pass edits it
      log.warn({ err: error, service: formatServiceKey(held.service) }, 'ipvs: could not re-add a held server; retried next interval');
    }
  }

  /**
   * Keeps the index's weight of a released server current: its next drain takes the original
   * weight to restore from the index, and the index's last scan may date from the drain (0).
   */
  private rememberWeight(held: HeldServer, weight: number): void {
    const id = heldId(held.service, held.destination);
    for (const entry of this.index.get(held.destination.address.toLowerCase()) ?? []) {
      if (heldId(entry.service.key, entry.dest) === id) entry.dest = { ...entry.dest, weight };
    }
  }

  private async releasePod(uid: string, why: 'serving' | 'gone'): Promise<void> {
    const { ipvs, logger } = this.options;
    for (const [id, held] of [...this.holds]) {
      if (held.podUid !== uid) continue;
      const log = logger.child({ pod: held.podKey, ip: held.destination.address });
      try {
        if (why === 'gone' && held.recreated) {
          await ipvs.deleteDestination(held.service, held.destination);
          log.info({ service: formatServiceKey(held.service) }, 'ipvs: pod gone; removed the server the agent had re-created');
        } else if (why === 'serving') {
          const current = (await ipvs.listDestinations(held.service)).find((d) => formatDestinationKey(d) === formatDestinationKey(held.destination));
          if (current !== undefined && current.weight === 0) await ipvs.setDestinationWeight(held.service, held.destination, held.originalWeight);
          if (current !== undefined) this.rememberWeight(held, current.weight === 0 ? held.originalWeight : current.weight);
          log.info({ service: formatServiceKey(held.service), weight: held.originalWeight }, 'ipvs: pod Ready again; original weight back, hold released');
        } else {
          log.info({ service: formatServiceKey(held.service) }, 'ipvs: pod gone; hold released, server left as the proxy left it');
        }
      } catch (error) {
        if (!isCode(error, 'ENOENT', 'ESRCH')) {
          log.warn({ err: error, service: formatServiceKey(held.service) }, 'ipvs: release failed; retried next interval');
          continue;
        }
      }
      this.holds.delete(id);
      this.options.hooks?.changed?.();
    }
  }
}

/** Servers newly held at weight 0 in one step, logged as one line per pod (1,000 services: not 1,000 lines). */
class HoldReport {
  private readonly byPod = new Map<string, HeldServer[]>();

  add(held: HeldServer): void {
    let list = this.byPod.get(held.podKey);
    if (list === undefined) this.byPod.set(held.podKey, (list = []));
    list.push(held);
  }

  log(logger: Logger): void {
    for (const [pod, list] of this.byPod) {
      const ips = [...new Set(list.map((h) => h.destination.address))];
      const services = list.slice(0, 10).map((h) => `${formatServiceKey(h.service)} (was ${h.originalWeight})`);
      logger.info({ pod, ips, servers: list.length, services, more: Math.max(0, list.length - services.length) }, `ipvs: holding ${list.length} real server(s) at weight 0`);
    }
  }
}

function podOfIpHas(podOfIp: ReadonlyMap<string, readonly DrainingPod[]>, held: HeldServer): boolean {
  return podOfIp.get(held.destination.address.toLowerCase())?.some((p) => p.uid === held.podUid) === true;
}
