/**
 * The plan runnable: re-plans the pods the watch touched (and deleting pods whose grace
 * elapsed), then hands the result on: the IPVS runnable holds what the plan says is draining,
 * the planner publishes transitions (drain runnable) and flushes (conntrack runnable), and the
 * state file is written after a change. Work is proportional to what changed, not to the
 * number of pods in the cluster.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { DrainingPod } from '../ipvs/ipvs-hold.js';
import type { PodChange } from '../pods/pods-runnable.js';
import type { PodCache } from '../pods/pod-cache.js';
import type { Runnable } from '../runnable.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { samePlanInput, type DrainPlanner } from './drain-planner.js';

/** The IPVS side of a run (the IPVS runnable). */
export interface HoldApplier {
  /** Whether the hold is on: off (no IPVS on the node, `--ipvs-hold=false`), no run builds the list of pods to hold. */
  readonly holding: boolean;
  /** `draining` is read only when `changed` or `fullPass` (otherwise the run passes an empty list). */
  apply(draining: DrainingPod[], changed: boolean, fullPass: boolean): Promise<void>;
  /** Resolves when no full hold pass is running. */
  idle(): Promise<void>;
}

/**
 * The agent's gap between plan runs: at 200 watch events a second a run takes in about two
 * events instead of one, which cut the agent's CPU in a readiness storm by about a fifth
 * (bench/scale), for at most this much more from an event to weight 0.
 */
export const PLAN_RUN_GAP_MS = 10;

export interface PlanLoopOptions {
  planner: DrainPlanner;
  cache: PodCache;
  /** Whether the first complete pod list is in. */
  synced: () => boolean;
  /**
   * Lists this node's pods again (a consistent read) and applies them; false when that failed.
   * A decision by time alone (a deleting pod's grace ran out) waits for it: a stalled watch
   * can hide a deletion and the pod that got the IP since.
   */
  resync: () => Promise<boolean>;
  hold: HoldApplier;
  /** What to hold: this node's draining pods and the cluster's draining endpoints. */
  holds: { draining(): DrainingPod[]; takeHoldingChanged(): boolean };
  /** After a run that planned: the conntrack event index is told the watched IPs. */
  rewatch: (nowMs: number) => void;
  /** Writes the state file (coalesced, in the background). */
  save: () => Promise<void>;
  holdIntervalMs: number;
  /**
   * Runs start at least this far apart (kube-proxy's min sync period, at a watch event's scale):
   * in a storm of events a run takes in the few that came meanwhile, instead of one run each.
   * After a quiet moment a run starts at once. 0: every request runs at once.
   */
  minRunGapMs?: number;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  /** The agent stops: no new run. */
  stopping: () => boolean;
  /** The agent handed the node over to a newer instance that runs the plan now: no new run. */
  yielded: () => boolean;
}

export class PlanLoop implements Runnable {
  readonly name = 'plan';
  /** The plan ran on a synced cache at least once (readiness). */
  planned = false;
  private timers: TimerHandle[] = [];
  private runScheduled: TimerHandle | undefined;
  /** The timer of the earliest deleting pod's grace end (planner.nextDeadline). */
  private deadlineTimer: { at: number; handle: TimerHandle } | undefined;
  /** The first complete list is in and every pod was queued for its first plan. */
  private syncSeen = false;
  /** The hold interval elapsed: re-assert every hold (the proxy may have reset weights). */
  private reassertDue = true;
  /** Records or holds changed since the state file was last written. */
  private stateDirty = true;
  private running: Promise<void> | undefined;
  private again = false;
  private lastRunAtMs = Number.NEGATIVE_INFINITY;
  /** kick() ran: every part is up. */
  private kicked = false;
  /** A resync asked at this time was applied: the view is at least this fresh (deadlines up to it may be decided). */
  private freshAtMs = Number.NEGATIVE_INFINITY;
  private freshening = false;
  private freshRetry: TimerHandle | undefined;

  constructor(private readonly options: PlanLoopOptions) {}

  /** A pod changed in the cache: re-planned on the next run (unless only fields the plan does not read changed). */
  podChanged(change: PodChange): void {
    if (change.kind === 'upsert') {
      if (change.prior !== undefined && samePlanInput(change.prior, change.now)) return; // a relist or a field the plan does not read
      this.options.planner.touched(change.uid, change.prior);
    } else this.options.planner.touched(change.uid, change.gone.view);
    this.requestRun();
  }

  /** Something the state file keeps changed: written after the next run. */
  markStateDirty(): void {
    this.stateDirty = true;
  }

  start(): Promise<void> {
    this.timers.push(this.options.clock.setInterval(() => {
      this.reassertDue = true;
      this.requestRun();
    }, this.options.holdIntervalMs));
    return Promise.resolve();
  }

  /** Every part is up: the first run (and the first state write). */
  kick(): void {
    this.kicked = true;
    this.stateDirty = true;
    this.requestRun();
  }

  /** This instance edits IPVS now: the next run re-asserts every hold and writes the state file. */
  fullPassDue(): void {
    this.reassertDue = true;
    this.stateDirty = true;
    if (this.kicked && !this.options.stopping()) this.requestRun(); // before, kick() runs the first one
  }

  async stop(): Promise<void> {
    for (const t of this.timers) t.cancel();
    this.runScheduled?.cancel();
    this.deadlineTimer?.handle.cancel();
    this.freshRetry?.cancel();
    await this.running?.catch(() => undefined);
  }

  /** A run soon (coalesced). */
  requestRun(): void {
    const { stopping, yielded, clock } = this.options;
    if (stopping() || yielded() || this.runScheduled !== undefined) return;
    const wait = Math.max(0, this.lastRunAtMs + (this.options.minRunGapMs ?? 0) - clock.now());
    this.runScheduled = clock.setTimeout(() => {
      this.runScheduled = undefined;
      this.again = true;
      this.running ??= this.runLoop();
    }, wait);
  }

  /** Runs the plan now (tests); resolves when its IPVS and state-file work is done. */
  async runNow(): Promise<void> {
    this.again = true;
    this.running ??= this.runLoop();
    await this.running;
    await this.options.hold.idle();
  }

  private async runLoop(): Promise<void> {
    try {
      while (this.again && !this.options.stopping()) {
        this.again = false;
        try {
          await this.runOnce();
        } catch (error) {
          this.options.logger.error({ err: error }, 'plan run failed; retried on the next interval');
        }
      }
    } finally {
      this.running = undefined;
    }
  }

  /** One run: re-plan the pods touched since the last one, then hold, tell the event index, save. */
  private async runOnce(): Promise<void> {
    const { planner, cache, clock, metrics } = this.options;
    const now = clock.now();
    this.lastRunAtMs = now;
    const synced = this.options.synced();
    let planned = false;
    if (synced) {
      if (!this.syncSeen) {
        this.syncSeen = true;
        planner.touchAll(cache.knownUids());
      }
      this.touchDueOnFreshView(now);
      if (planner.pending > 0) {
        planned = true;
        if (planner.plan(now, this.freshAtMs)) this.stateDirty = true;
      }
      this.armDeadline();
    }
    metrics.podsCached.set(cache.size);
    const changed = this.options.holds.takeHoldingChanged();
    const fullPass = this.reassertDue || !synced;
    this.reassertDue = false;
    // Not synced yet (e.g. API down after a restart): the planner holds what the state file says is draining.
    // Built only for a pass that reads it: a run whose events changed no hold does no IPVS work.
    const draining = this.options.hold.holding && (changed || fullPass) ? this.options.holds.draining() : [];
    await this.options.hold.apply(draining, changed, fullPass);
    // After the hold: the watched set is not on the path from a watch event to weight 0.
    if (planned) this.options.rewatch(now);
    // Written in the background (coalesced), only after a change: an fsync must not delay the next event's hold.
    if (this.stateDirty) {
      this.stateDirty = false;
      void this.options.save();
    }
    if (this.options.synced()) this.planned = true;
  }

  /**
   * Deleting pods whose grace ran out are re-planned (as gone) only on a view at least as new
   * as their deadline: the first run after a deadline asks for a resync and the next run
   * after it was applied decides, with the IP-reuse check on the resynced pods. While the API
   * cannot be read, they stay draining (held) and the resync is retried.
   */
  private touchDueOnFreshView(now: number): void {
    const due = this.options.planner.nextDeadline;
    if (due === undefined || due > now) return;
    if (this.freshAtMs >= due) {
      this.options.planner.touchDue(this.freshAtMs);
      return;
    }
    if (this.freshening || this.freshRetry !== undefined) return;
    this.freshening = true;
    this.options.metrics.staleViewDeferrals.inc({ source: 'pods' });
    const askedAt = now;
    void this.options.resync().then((applied) => {
      this.freshening = false;
      if (this.options.stopping()) return;
      if (applied) {
        this.freshAtMs = Math.max(this.freshAtMs, askedAt);
        this.requestRun();
        return;
      }
      this.options.logger.info('plan: a deleting pod\'s grace ran out but this node\'s pods could not be listed again; it stays held until they can');
      this.freshRetry = this.options.clock.setTimeout(() => {
        this.freshRetry = undefined;
        this.requestRun();
      }, this.options.holdIntervalMs);
    });
  }

  /** One timer, for the earliest deleting pod whose grace ends: no scan of deleting pods. */
  private armDeadline(): void {
    const { planner, clock, stopping } = this.options;
    const next = planner.nextDeadline;
    if (next === undefined || stopping()) return;
    if (this.deadlineTimer !== undefined && this.deadlineTimer.at <= next) return;
    this.deadlineTimer?.handle.cancel();
    const handle = clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      this.requestRun();
    }, Math.max(0, next - clock.now()));
    this.deadlineTimer = { at: next, handle };
  }
}
