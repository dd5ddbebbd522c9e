/**
 * The IPVS runnable: holds the plan's draining pods at weight 0 on this node's IPVS real
 * servers (edits only, never delete-and-re-add), re-asserts every hold when the plan asks for a
 * full pass, keeps the address index fresh while nothing drains, and runs flow pinning for
 * mh/sh services. Turns itself off (conntrack-only) where IPVS is not available.
 */
import type { Logger } from 'pino';
import type { IpvsApi } from 'netlink-native/types';
import { isCode } from './netlink-code.js';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { AgentConfig } from '../../src/config/agent.js';
import type { Runnable } from '../runnable.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { IpvsEditor } from '../handover/handover.js';
import { Topic } from '../topic.js';
import type { FlowpinController } from './flowpin/controller.js';
import { createAgentFlowpin, flowpinSkip } from './flowpin/wire.js';
import { IpvsHold, type DrainingPod, type HeldServer, type ServingUids } from './ipvs-hold.js';
import { IpvsOwnership } from '../handover/index.js';

/** What the plan says to hold: the draining pods, and which pods the API shows serving again. */
export interface HoldPlan {
  draining(): DrainingPod[];
  isServing(uid: string): boolean;
}

export interface IpvsOptions {
  config: Pick<AgentConfig, 'ipvsHold' | 'holdIntervalMs' | 'flowPinning' | 'fwmarkRange'>;
  ipvs: IpvsApi;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  plan: HoldPlan;
  /** The agent stops: no new IPVS pass. */
  stopping: () => boolean;
  /** The agent hands over (SIGTERM) to a newer instance that is connected: once that one edits IPVS, this one reads it no more. */
  handingOverToNewer: () => boolean;
  /** Pods annotated `conndrain.io/flow-pinning: off`, among others the ones with servers held (`heldUids`). */
  flowPinningOptOuts: (heldUids: string[]) => ReadonlySet<string>;
}

export class IpvsRunnable implements Runnable, IpvsEditor {
  readonly name = 'ipvs';
  /** The held servers changed (the state file is due). */
  readonly changed = new Topic<void>();
  /** This instance edits IPVS from now on (it waited for an older one, or had handed IPVS over): a full pass is due. */
  readonly gained = new Topic<void>();
  /** Which instance edits IPVS while two overlap (docs/handover.md). */
  private readonly ownership: IpvsOwnership;
  private started = false;
  private readonly hold: IpvsHold;
  private readonly flowpin: FlowpinController | undefined;
  private on: boolean;
  private refreshTimer: TimerHandle | undefined;
  /** The full hold pass in flight (startReassert), and whether another was asked for meanwhile. */
  private reasserting: Promise<void> | undefined;
  private reassertAgain = false;
  /** The plan's passes in flight (apply): a handover to a newer instance waits for their edits. */
  private readonly applying = new Set<Promise<void>>();
  /**
   * The interval's pass reads only the services that hold (or may hold) a draining pod's
   * servers; every service is read when asked (a draining pod the index knows no server of,
   * IPVS gained, the first passes) and at least every `fullEveryMs`.
   */
  private fullAsked = true;
  private lastFullAt = Number.NEGATIVE_INFINITY;
  /** When a full pass last read every service (one with nothing to hold reads none). */
  private lastScanAt = Number.NEGATIVE_INFINITY;
  private readonly fullEveryMs: number;

  constructor(private readonly options: IpvsOptions) {
    const { config, ipvs, logger: log, metrics, clock } = options;
    this.on = config.ipvsHold;
    this.fullEveryMs = Math.max(10_000, config.holdIntervalMs * 10);
    this.hold = new IpvsHold({
      ipvs,
      logger: log,
      skipService: flowpinSkip(config),
      hooks: {
        restored: (action) => metrics.ipvsRestores.inc({ action }),
        changed: () => {
          metrics.ipvsServersHeld.set(this.hold.size);
          this.changed.publish();
        },
      },
    });
    this.ownership = new IpvsOwnership({ clock, logger: log, gained: () => this.onGained() });
    this.flowpin = createAgentFlowpin({
      config, ipvs, logger: log, held: () => this.hold.list(), clock, registry: metrics.registry,
      optOutPodUids: () => options.flowPinningOptOuts(this.hold.list().map((h) => h.podUid)),
    });
  }

  /** Whether the hold is on (--ipvs-hold, and IPVS available on the node). */
  get holding(): boolean {
    return this.on;
  }

  /** This instance may edit IPVS now (no overlapping instance edits it). */
  get owns(): boolean {
    return this.ownership.owns;
  }

  /** The servers held now (state file, /debug/holds). */
  list(): HeldServer[] {
    return this.hold.list();
  }

  /** Holds from the state file. */
  resume(held: readonly HeldServer[]): void {
    this.hold.resume(held);
    this.options.metrics.ipvsServersHeld.set(this.hold.size);
  }

  async start(): Promise<void> {
    const { clock } = this.options;
    await this.probe();
    // While nothing drains the hold does no IPVS call; this keeps its address index fresh so a
    // new drain edits its known servers at once (bench/agent: watch event -> weight 0).
    this.refreshTimer = clock.setInterval(() => void this.refreshIndex(), this.fullEveryMs);
    void this.refreshIndex();
    if (this.on && this.owns) this.flowpin?.start();
    this.started = true;
  }

  /**
   * One plan run's IPVS work. A run for events that changed no hold (a new pod, a Ready pod)
   * does nothing; one that changed holds edits only the changed pods' known servers (no scan of
   * every service); `fullPass` (the hold interval, or not synced yet) re-asserts every hold.
   */
  async apply(draining: DrainingPod[], changed: boolean, fullPass: boolean): Promise<void> {
    const run = this.applyOnce(draining, changed, fullPass);
    this.applying.add(run);
    try {
      await run;
    } finally {
      this.applying.delete(run);
    }
  }

  private async applyOnce(draining: DrainingPod[], changed: boolean, fullPass: boolean): Promise<void> {
    if (this.on && this.owns && (changed || fullPass)) {
      try {
        // A newly draining pod the address index knows no server of: scan now rather than at the interval.
        const unindexed = changed ? await this.hold.syncChanged(draining, this.servingHeldUids()) : 0;
        if (unindexed > 0) this.fullAsked = true;
        if (fullPass || unindexed > 0) this.startReassert();
        if (this.flowpin !== undefined) void this.flowpin.sync().catch(() => undefined);
      } catch (error) {
        this.failed(error, 'IPVS hold pass failed; retried next interval');
      }
    }
    this.options.metrics.ipvsServersHeld.set(this.hold.size);
  }

  /** Resolves when no full pass is running (tests: runNow). */
  async idle(): Promise<void> {
    while (this.reasserting !== undefined) await this.reasserting;
  }

  /** Handover to a connected newer instance: it pins the flows from now on. */
  async yieldFlowpin(): Promise<void> {
    await this.flowpin?.stop();
  }

  /** Stops its timers and passes; the ownership of IPVS is released by the handover (release()), after its bye. */
  async stop(): Promise<void> {
    this.refreshTimer?.cancel();
    await this.reasserting;
    await this.flowpin?.stop();
  }

  /** Following the older instance `holder`: no IPVS edits until it has handed over (or is gone). */
  expect(holder: string): void {
    this.ownership.expect(holder);
  }

  /** `take` was sent to `holder`: its holds are awaited for a bounded time. */
  asked(holder: string): void {
    this.ownership.asked(holder);
  }

  /** `holder` is gone. */
  settled(holder: string): void {
    this.ownership.settled(holder);
  }

  /** An older instance's holds (its original weights win over weights this one only assumed). */
  adopt(holder: string, held: HeldServer[]): void {
    const changed = this.hold.adopt(held);
    this.options.logger.info({ from: holder, holds: held.length, adopted: changed }, 'handover: the older agent instance handed its IPVS holds over');
    this.ownership.settled(holder);
  }

  /** A newer instance takes IPVS over: stop editing it, let the edits in flight finish, hand the holds over. */
  async yieldTo(to: string): Promise<HeldServer[]> {
    this.ownership.handOver(to);
    await this.flowpin?.stop();
    // The plan's pass in flight, if any: its edits began before the handover.
    await Promise.allSettled(this.applying);
    await this.idle();
    await this.hold.idle();
    return this.hold.list();
  }

  /** The newer instance went away: edit IPVS again, with the holds it wrote to the state file. */
  reclaim(stored: HeldServer[] | undefined): void {
    if (stored !== undefined) this.hold.adopt(stored);
    this.ownership.reclaim();
  }

  /** The agent stops: no more waits for older instances' holds. */
  release(): void {
    this.ownership.close();
  }

  private onGained(): void {
    const { logger, stopping } = this.options;
    logger.info({ holds: this.hold.size }, 'handover: this agent instance edits IPVS now');
    this.fullAsked = true;
    this.gained.publish();
    if (!this.started || stopping()) return; // start() starts flow pinning
    if (this.on) this.flowpin?.start();
  }

  private async probe(): Promise<void> {
    const { logger: log, metrics, ipvs } = this.options;
    if (!this.on) {
      log.info('IPVS hold off (--ipvs-hold=false): conntrack-only');
      metrics.ipvsAvailable.set(0);
      return;
    }
    try {
      await ipvs.listServices();
      metrics.ipvsAvailable.set(1);
    } catch (error) {
      if (isCode(error, 'EIPVSUNAVAILABLE')) this.disable();
      else log.warn({ err: error }, 'IPVS probe failed; holding anyway and retrying every interval');
    }
  }

  private failed(error: unknown, message: string): void {
    if (isCode(error, 'EIPVSUNAVAILABLE')) this.disable();
    else this.options.logger.warn({ err: error }, message);
  }

  private disable(): void {
    if (!this.on) return;
    this.on = false;
    this.options.metrics.ipvsAvailable.set(0);
    this.options.logger.warn('IPVS is not available on this node: running conntrack-only (no IPVS hold)');
  }

  /**
   * The hold pass (scan the services, restore what the proxy reset; ReassertScope), not awaited by the
   * plan run: its scan runs beside the IPVS queue, so a watch event's edits do not wait for it.
   * One at a time; one asked for meanwhile runs after it.
   */
  private startReassert(): void {
    if (!this.owns) return;
    if (this.reasserting !== undefined) {
      this.reassertAgain = true;
      return;
    }
    const { plan, stopping, metrics, clock } = this.options;
    this.reasserting = (async () => {
      do {
        this.reassertAgain = false;
        const now = clock.now();
        const full = this.fullAsked || now - this.lastFullAt >= this.fullEveryMs;
        if (full) this.fullAsked = false;
        try {
          const { scannedAll } = await this.hold.reassert(() => ({ draining: plan.draining(), servingUids: this.servingHeldUids() }), full ? 'full' : 'held');
          if (full) this.lastFullAt = now;
          if (scannedAll) this.lastScanAt = now;
        } catch (error) {
          if (full) this.fullAsked = true;
          this.failed(error, 'IPVS hold pass failed; retried next interval');
        }
        metrics.ipvsServersHeld.set(this.hold.size);
      } while (this.reassertAgain && this.on && !stopping() && this.owns);
    })().finally(() => {
      this.reasserting = undefined;
    });
  }

  /** Pods with held servers that the API shows serving again (their release restores the weights). */
  private servingHeldUids(): ServingUids {
    // Asked only of the pods whose holds a pass releases: not a pass over every held server per run.
    return { has: (uid) => this.options.plan.isServing(uid) };
  }

  private async refreshIndex(): Promise<void> {
    const { stopping, handingOverToNewer } = this.options;
    // Handed over to a newer instance that edits IPVS now: it keeps its own index.
    if (!this.on || stopping() || (handingOverToNewer() && !this.owns)) return;
    // While anything drains, the full pass reads every service and rebuilds the index itself,
    // each fullEveryMs at the first hold interval it is due: a second scan in the same period
    // doubles work that grows with the node's table (a real server per endpoint of every
    // Service on an IPVS-mode node).
    if (this.options.clock.now() - this.lastScanAt <= this.fullEveryMs + this.options.config.holdIntervalMs) return;
    try {
      await this.hold.refreshIndex();
    } catch (error) {
      this.failed(error, 'IPVS index refresh failed');
    }
  }
}
