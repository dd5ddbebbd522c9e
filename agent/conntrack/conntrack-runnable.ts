/**
 * The conntrack runnable: deletes a gone pod's entries (ghost cleanup) when the plan asks,
 * keeps the conntrack event index on the IPs of the managed pods, runs the stale-entry janitor
 * (--janitor) and polls the table's statistics. The drain sessions count open flows through
 * `api`, which asks the event index when it is open and a dump pass otherwise.
 */
import type { Logger } from 'pino';
import type { ConntrackApi, ConntrackEventsApi } from 'netlink-native/types';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import type { AgentConfig } from '../../src/config/agent.js';
import type { PodRecord } from '../../src/drain-plan.js';
import type { PlannedFlush } from '../plan/drain-planner.js';
import { eventPodOf, type PodEvents } from '../pods/index.js';
import type { Runnable } from '../runnable.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { Topic } from '../topic.js';
import { GhostCleanup, type FlushReport } from './ghost-cleanup.js';
import { IndexedConntrack } from './indexed-conntrack.js';
import type { JanitorMetrics, RunningJanitor, ScanReport, StaleJanitor } from '../stale/index.js';
import type { Ownership } from '../../src/stale/index.js';
import type { RawSlice } from '../../src/endpoints/slice-view.js';
import { TargetFlush, type TargetFlushRequest } from './target-flush.js';

/** The plan's records, as the cleanup needs them: who is gone, and marking them flushed. */
export interface FlushedPlan {
  record(uid: string): PodRecord | undefined;
  markFlushed(uid: string, nowMs: number): boolean;
}

/** A sweep again (after a relist) at most this often (or --janitor-interval, when shorter): each is a table dump. */
const RESWEEP_SPACING_MS = 10_000;

export interface ConntrackOptions {
  config: Pick<AgentConfig, 'nodeName' | 'conntrackEvents' | 'flushWindowMs' | 'janitor' | 'janitorGraceMs' | 'janitorIntervalMs' | 'relistBackoffMaxMs' | 'statsIntervalMs' | 'restartSweep'>;
  netlink: ConntrackApi & Partial<ConntrackEventsApi>;
  kube: KubeConnection;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  events: PodEvents;
  plan: FlushedPlan;
  /** The live pod (namespace/name) that holds `ip` now, other than `goneUid` (IP reuse). */
  liveHolder: (ip: string, goneUid: string) => string | undefined;
  /** The IPs the event index watches: this node's managed pods and those not yet flushed. */
  watchedIps: () => Set<string>;
  /** Another pod than `uid` that holds `address` now (a current endpoint or a live local pod): never flushed. */
  holderOf: (address: string, uid: string) => string | undefined;
  /** Of these addresses, those a current endpoint or a live local pod holds (the restart sweep asks the API about the rest). */
  heldLocally: (addresses: readonly string[]) => Set<string>;
  /** Who owns a target, from the endpoints' own view of the slices: the sweep and the janitor keep no second index of the cluster. */
  ownership: Ownership;
}

export class ConntrackRunnable implements Runnable {
  readonly name = 'conntrack';
  /** Conntrack for the drain sessions: the event index when open, the dump otherwise. */
  readonly api: ConntrackApi;
  /** A pod's entries were deleted and its record is `flushed` (the state file is due). */
  readonly flushed = new Topic<void>();
  /** The stale-entry janitor, when --janitor is on. */
  janitor: RunningJanitor | undefined;
  private readonly cleanup: GhostCleanup;
  private readonly targets: TargetFlush;
  /** The ownership index of the restart sweep (and of the janitor when --janitor is on), fed by the endpoints runnable. */
  private stale: StaleJanitor | undefined;
  /** The sweep is done (no --janitor): its janitor was dropped (`stale` undefined). */
  private sweepDone = false;
  private sweepEndedAtMs = Number.NEGATIVE_INFINITY;
  private resweepTimer: TimerHandle | undefined;
  private janitorMetrics: JanitorMetrics | undefined;
  private stopped = false;
  /** The conntrack event index, when --conntrack-events is on and it opened. */
  private indexed: IndexedConntrack | undefined;
  /** Pod IPs changed since the event index was last told (told at most once a second). */
  private watchedIpsStale = true;
  private watchedIpsToldAt = Number.NEGATIVE_INFINITY;
  private statsTimer: TimerHandle | undefined;

  constructor(private readonly options: ConntrackOptions) {
    const { netlink, clock, logger: log, metrics, config } = options;
    this.api = {
      listConntrack: (o) => (this.indexed ?? netlink).listConntrack(o),
      deleteConntrack: (o) => (this.indexed ?? netlink).deleteConntrack(o),
      deleteConntrackEntries: (e) => netlink.deleteConntrackEntries(e),
      scanDnatEntries: (o) => netlink.scanDnatEntries(o),
      conntrackStats: () => netlink.conntrackStats(),
    };
    this.cleanup = new GhostCleanup({
      conntrack: this.api,
      clock,
      windowMs: config.flushWindowMs,
      logger: log,
      // Re-checked against the cache just before each pass (and counted when reused).
      liveHolder: options.liveHolder,
      hooks: {
        flushed: (uid, report) => this.onFlushed(uid, report),
        reuseSkipped: () => metrics.ipReuseSkips.inc(),
        passDone: (report) => {
          metrics.flushDuration.observe(report.result.ms / 1000);
          for (const [protocol, counts] of Object.entries(report.result.byProtocol)) if (counts.deleted > 0) metrics.conntrackDeleted.inc({ protocol }, counts.deleted);
        },
        passFailed: () => metrics.flushFailures.inc(),
      },
    });
    this.targets = new TargetFlush({
      // A dump pass: the event index watches only this node's pods' addresses, never other nodes' endpoints.
      conntrack: netlink,
      clock,
      windowMs: config.flushWindowMs,
      logger: log,
      holderOf: options.holderOf,
      hooks: {
        reuseSkipped: () => metrics.ipReuseSkips.inc(),
        failed: () => metrics.flushFailures.inc(),
      },
    });
  }

  /** A gone endpoint of another node (or an unmanaged pod): its entries, by its slices' targets. */
  flushTargets(request: TargetFlushRequest): void {
    this.targets.request(request);
  }

  /** A slice arrived or changed (the restart sweep's and the janitor's ownership index). */
  sliceUpserted(slice: RawSlice): void {
    this.stale?.upsertSlice(slice);
  }

  sliceRemoved(key: string): void {
    this.stale?.removeSlice(key);
  }

  /**
   * Slices, namespaces and this node's pods are all listed: the restart sweep (and the janitor)
   * scans. Entries DNATed to an address no endpoint owns and no live pod holds are deleted
   * after the grace: a pod deleted while no agent ran on this node leaves no ghost.
   */
  synced(): void {
    this.stale?.markSynced();
  }

  /** The plan found a gone pod whose IPs no live pod holds. */
  flush(pod: PlannedFlush): void {
    this.cleanup.request(pod);
  }

  /** A pod's IPs may have changed: the event index is told after the next plan run. */
  ipsChanged(): void {
    this.watchedIpsStale = true;
  }

  /** After a plan run: tells the event index the watched IPs if they changed (at most once a second). */
  rewatch(nowMs: number): void {
    if (this.indexed === undefined || !this.watchedIpsStale || nowMs - this.watchedIpsToldAt < 1000) return;
    this.watchedIpsStale = false;
    this.watchedIpsToldAt = nowMs;
    void this.indexed.watch(this.options.watchedIps());
  }

  async start(): Promise<void> {
    const { config, clock } = this.options;
    await this.openEventIndex();
    if (config.janitor || config.restartSweep) {
      const janitor = await this.makeSweep();
      this.stale = janitor;
      if (config.janitor) {
        janitor.start();
        this.janitor = { janitor, stop: () => janitor.stop() };
      }
    }
    this.statsTimer = clock.setInterval(() => void this.pollStats(), config.statsIntervalMs);
    void this.pollStats();
  }

  /**
   * A watch relisted after a gap: a pod that came and went in the gap (created, served, deleted
   * while the watch was down or stalled) is in no event and no list, so no flush will ever name
   * it. The restart sweep's rule (entries DNATed to an address no endpoint owns and no live pod
   * holds, after its grace) finds its entries: the sweep runs again, at most once per
   * `RESWEEP_SPACING_MS` or --janitor-interval (a table dump each), or the janitor, when on, scans now.
   */
  resweep(): void {
    const { config, clock } = this.options;
    if (this.stopped || (!config.janitor && !config.restartSweep)) return;
    if (this.stale !== undefined) {
      this.stale.requestScan();
      return;
    }
    if (this.resweepTimer !== undefined) return;
    const wait = Math.max(0, this.sweepEndedAtMs + Math.min(RESWEEP_SPACING_MS, config.janitorIntervalMs) - clock.now());
    this.resweepTimer = clock.setTimeout(() => {
      this.resweepTimer = undefined;
      void this.startSweepAgain();
    }, wait);
  }

  private async startSweepAgain(): Promise<void> {
    if (this.stopped || this.stale !== undefined) return;
    this.options.logger.info('restart sweep again: a watch relisted after a gap (pods that came and went in it were never seen)');
    this.sweepDone = false;
    const sweep = await this.makeSweep();
    if (this.stopped) return;
    this.stale = sweep;
    sweep.markSynced();
  }

  /** The stale-entry janitor (--janitor) or the one-off restart sweep: the same rule. */
  private async makeSweep(): Promise<StaleJanitor> {
    const { config, kube, netlink, metrics, clock, logger } = this.options;
    const { StaleJanitor: Janitor, JanitorMetrics, makeLivePodHolders } = await import('../stale/index.js');
    const fromApi = makeLivePodHolders(kube, 8, { fromCache: true });
    const log = logger.child({ part: config.janitor ? 'janitor' : 'restart-sweep' });
    this.janitorMetrics ??= new JanitorMetrics(metrics.registry);
    return new Janitor({
      conntrack: netlink, clock, logger: log, metrics: this.janitorMetrics, graceMs: config.janitorGraceMs, intervalMs: config.janitorIntervalMs,
      livePodHolders: async (addresses) => {
        const held = this.options.heldLocally(addresses);
        const rest = addresses.filter((a) => !held.has(a));
        for (const a of rest.length === 0 ? [] : await fromApi(rest)) held.add(a);
        return held;
      },
      scanned: (report) => this.onSweep(report),
      ownership: this.options.ownership,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resweepTimer?.cancel();
    this.statsTimer?.cancel();
    await this.stale?.stop();
    this.cleanup.stop();
    this.targets.stop();
    this.indexed?.close();
    this.indexed = undefined;
  }

  /** --conntrack-events: open the event index (a failure leaves the agent on dump passes). */
  private async openEventIndex(): Promise<void> {
    const { config, netlink, logger: log, metrics } = this.options;
    const open = netlink.openConntrackEvents?.bind(netlink);
    if (!config.conntrackEvents) {
      log.info('conntrack events off (--conntrack-events=false): open flows and ghost entries from dump passes');
      return;
    }
    if (open === undefined) {
      log.warn('conntrack events: this netlink has no event index; dump passes only');
      return;
    }
    try {
      const index = await open();
      this.indexed = new IndexedConntrack(netlink, index, log, {
        fallback: (use) => metrics.indexFallbacks.inc({ use }),
        verifyLeftovers: (n) => metrics.indexVerifyLeftovers.inc(n),
      });
      await this.indexed.watch(this.options.watchedIps());
      metrics.observeIndexStats(this.indexed.stats());
      log.info({ watched: this.indexed.stats().watchedAddresses, filter: this.indexed.stats().filter }, 'conntrack events: on (index of the managed pods\' flows; dump passes verify deletions)');
    } catch (error) {
      this.indexed = undefined;
      log.warn({ err: error }, 'conntrack events: could not open the event index; dump passes only');
    }
  }

  /** A sweep scan: deletions counted; with no --janitor the sweep ends once nothing waits out its grace. */
  private onSweep(report: ScanReport): void {
    if (report.deleted > 0) this.options.metrics.restartSweepDeleted.inc(report.deleted);
    if (this.options.config.janitor || report.waiting > 0 || this.sweepDone) return;
    this.sweepDone = true;
    this.sweepEndedAtMs = this.options.clock.now();
    this.options.logger.info({ deleted: report.deleted, scanned: report.scanned }, 'restart sweep done: entries of addresses no endpoint or local pod holds were deleted');
    const sweep = this.stale;
    this.stale = undefined;
    void sweep?.stop();
  }

  private onFlushed(uid: string, report: FlushReport): void {
    const { plan, clock, events, config } = this.options;
    const rec = plan.record(uid);
    plan.markFlushed(uid, clock.now());
    if (rec !== undefined) {
      const flushedIps = rec.ips.filter((ip) => report.addresses.includes(ip));
      events.conntrackFlushed(eventPodOf(rec), `deleted the conntrack entries of ${flushedIps.join(', ') || 'no IP (all reused)'} on ${config.nodeName} (${report.result.deleted} entries in one pass for ${report.pods.length} pod(s))`);
    }
    this.flushed.publish();
  }

  private async pollStats(): Promise<void> {
    const { netlink, metrics, logger } = this.options;
    try {
      metrics.observeConntrackStats(await netlink.conntrackStats());
      if (this.indexed !== undefined) metrics.observeIndexStats(this.indexed.stats());
    } catch (error) {
      logger.warn({ err: error }, 'conntrack stats read failed');
    }
  }
}
