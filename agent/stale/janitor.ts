/**
 * The stale-entry janitor (agent flag --janitor, off by default): ghost conntrack entries of
 * ANY pod, not only managed ones. It keeps an ownership index from the EndpointSlice watch,
 * scans the node's table on an interval and soon after an endpoint goes away, and deletes an
 * entry only once it has been stale (DNAT'ed to a target no endpoint owns and no live pod
 * holds) for longer than the grace, so an endpoint that is still propagating keeps its traffic.
 *
 * Safety, in order: no scan before the first full slice list; every stale target IP is asked
 * of the API (`status.podIP`) and one a live pod holds is left alone (any failure there: no
 * delete this round); right before the delete, entries the current index owns again (a slice
 * that arrived during the scan) are dropped; deletes are exact (original tuple, zone and the
 * kernel's id: `deleteConntrackEntries`), so nothing but those entries is touched. Nothing here
 * throws: a failed scan is logged and retried at the next interval.
 */
import type { Logger } from 'pino';
import type { ConntrackApi } from 'netlink-native/types';
import { excludePodIps, formatEndpoint, GraceTracker, groupByService, OwnershipIndex, planDeletion, scanStaleEntries, type Classification, type EndpointSliceLike, type Ownership, type StaleEntry } from '../../src/stale/index.js';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { JanitorMetrics } from './metrics.js';

/** The first retry of a failed scan (then doubled, up to the interval). */
const FIRST_RETRY_MS = 1000;

export interface JanitorOptions {
  conntrack: ConntrackApi;
  clock: Clock;
  logger: Logger;
  metrics?: JanitorMetrics;
  graceMs: number;
  intervalMs: number;
  /** Of these addresses, those a live pod holds (API `status.podIP`); rejects when unsure. */
  livePodHolders: (addresses: readonly string[]) => Promise<Set<string>>;
  /** Scan this long after an endpoint removal (coalesces a burst of slice updates). */
  removalDelayMs?: number;
  /** After each scan, with its report. */
  scanned?: (report: ScanReport) => void;
  /**
   * Who owns a target, from the caller's own view of the slices (the agent's EndpointIndex):
   * then the janitor keeps no index of its own and upsertSlice/removeSlice only time scans.
   */
  ownership?: Ownership;
}

export interface ScanReport {
  scanned: number;
  stale: number;
  /** Stale entries still within the grace. */
  waiting: number;
  livePodSkips: number;
  deleted: number;
  blocked: number;
  ms: number;
}

export class StaleJanitor {
  /** Its own index, fed by upsertSlice/removeSlice, unless the caller gave an ownership view. */
  readonly index: OwnershipIndex | undefined;
  readonly ownership: Ownership;
  private readonly grace: GraceTracker;
  private synced = false;
  private stopped = false;
  private interval: TimerHandle | undefined;
  private soon: TimerHandle | undefined;
  private retryMs = FIRST_RETRY_MS;
  private running: Promise<ScanReport | undefined> | undefined;
  private again = false;
  private readonly seenProtocols = new Set<string>();
  /** Last scan's report, for tests and /metrics. */
  lastReport: ScanReport | undefined;

  constructor(private readonly options: JanitorOptions) {
    this.grace = new GraceTracker(options.graceMs);
    this.index = options.ownership === undefined ? new OwnershipIndex() : undefined;
    this.ownership = options.ownership ?? (this.index as OwnershipIndex);
  }

  // ---- slice events (from SliceWatch) ----
  upsertSlice(slice: EndpointSliceLike): void {
    // Without an index of its own, an endpoint's removal is not seen here: the interval scan finds it.
    if ((this.index?.upsert(slice).removed ?? 0) > 0) this.scanSoon(this.options.removalDelayMs ?? 100);
  }

  /** A slice deleted (or its `namespace/name`). */
  removeSlice(slice: EndpointSliceLike | string): void {
    if ((this.index?.remove(slice).removed ?? 1) > 0) this.scanSoon(this.options.removalDelayMs ?? 100);
  }

  markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    this.options.logger.info({ slices: this.index?.sliceCount, targets: this.index?.targetCount, graceMs: this.options.graceMs, intervalMs: this.options.intervalMs }, 'janitor: endpoint slices synced, scanning');
    this.scanSoon(0);
  }

  get isSynced(): boolean {
    return this.synced;
  }

  start(): void {
    this.interval = this.options.clock.setInterval(() => this.scanSoon(0), this.options.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.interval?.cancel();
    this.soon?.cancel();
    await this.running;
  }

  /** Runs a scan now, or joins the one in progress (another follows it); resolves with its report. */
  async scan(): Promise<ScanReport | undefined> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.scanOnce().finally(() => {
      this.running = undefined;
    });
    const report = await this.running;
    if (this.again) {
      this.again = false;
      this.scanSoon(0);
    }
    return report;
  }

  /** Scans soon (a watch relisted after a gap: entries of pods never seen may wait here). */
  requestScan(): void {
    this.scanSoon(0);
  }

  private scanSoon(delayMs: number): void {
    if (this.stopped || !this.synced) return;
    if (this.soon !== undefined) {
      if (delayMs > 0) return; // one pending is enough
      this.soon.cancel();
    }
    this.soon = this.options.clock.setTimeout(() => {
      this.soon = undefined;
      this.scan().catch(() => undefined);
    }, delayMs);
  }

  private async scanOnce(): Promise<ScanReport | undefined> {
    if (!this.synced || this.stopped) return undefined;
    const { clock, logger, metrics } = this.options;
    const started = performance.now();
    let classification: Classification;
    let livePodSkips = 0;
    try {
      const scan = await scanStaleEntries(this.options.conntrack, this.ownership, new Set());
      classification = scan.classification;
      const targets = [...new Set(classification.stale.map((e) => e.target.address))];
      if (targets.length > 0) {
        const held = await this.options.livePodHolders(targets);
        if (held.size > 0) {
          classification = excludePodIps(classification, held);
          livePodSkips = classification.counts['pod-ip'];
          metrics?.livePodSkips.inc(livePodSkips);
          logger.info({ addresses: [...held] }, 'janitor: stale-looking entries point at IPs live pods hold; left alone');
        }
      }
    } catch (error) {
      // Sooner than the next interval, backing off: the restart sweep runs once, and a pod deleted
      // while no agent ran waits on it.
      const retryMs = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, this.options.intervalMs);
      logger.warn({ err: error, retryInMs: retryMs }, 'janitor: scan failed; nothing deleted, retrying');
      this.scanSoon(retryMs);
      return undefined;
    }
    this.retryMs = FIRST_RETRY_MS;
    this.publishStale(classification.stale);
    const { deletable, waiting } = this.grace.observe(classification.stale.map((e) => e.key), clock.now());
    // Re-check against the index as it is now: a slice that arrived during the dump owns its targets again.
    const plan = planDeletion(classification.stale.filter((e) => !this.ownership.owns(e.protocol, e.target.address, e.target.port)), deletable);
    let deleted = 0;
    if (plan.covered.length > 0) {
      try {
        const result = await this.options.conntrack.deleteConntrackEntries(plan.covered.map((e) => e.ref));
        deleted = result.deleted;
        for (const [protocol, counts] of Object.entries(result.byProtocol)) if (counts.deleted > 0) metrics?.deleted.inc({ protocol }, counts.deleted);
        if (result.failed > 0) logger.warn({ failed: result.failed, byProtocol: result.byProtocol }, 'janitor: some deletes failed; retried at the next scan');
        this.logDeleted(plan.covered);
        for (const entry of plan.covered) this.grace.forget(entry.key);
      } catch (error) {
        logger.warn({ err: error, entries: plan.covered.length }, 'janitor: delete failed; retried at the next scan');
      }
    }
    if (waiting > 0) this.scanSoon(this.options.graceMs + 50);
    const report: ScanReport = { scanned: classification.scanned, stale: classification.stale.length, waiting, livePodSkips, deleted, blocked: plan.blocked.length, ms: performance.now() - started };
    metrics?.scanDuration.observe(report.ms / 1000);
    this.lastReport = report;
    logger.debug({ ...report }, 'janitor: scan done');
    this.options.scanned?.(report);
    return report;
  }

  private publishStale(stale: readonly StaleEntry[]): void {
    const counts = new Map<string, number>();
    for (const e of stale) counts.set(e.protocol, (counts.get(e.protocol) ?? 0) + 1);
    for (const p of ['udp', 'tcp', 'sctp', ...counts.keys()]) this.seenProtocols.add(p);
    for (const p of this.seenProtocols) this.options.metrics?.staleEntries.set({ protocol: p }, counts.get(p) ?? 0);
  }

  private logDeleted(covered: readonly StaleEntry[]): void {
    for (const group of groupByService(covered, this.ownership)) {
      const targets = [...new Set(group.entries.map((e) => formatEndpoint(e.target.address, e.target.port)))];
      this.options.logger.info(
        { service: `${group.service.protocol} ${formatEndpoint(group.service.address, group.service.port)}`, serviceName: group.serviceName, targets, entries: group.entries.length },
        `janitor: deleted ${group.entries.length} stale entr${group.entries.length === 1 ? 'y' : 'ies'} of service ${group.serviceName ?? formatEndpoint(group.service.address, group.service.port)}`,
      );
    }
  }
}
