/**
 * The node agent, composed of one runnable per capability (docs/design/agent.md):
 *   events -> state -> handover -> health -> conntrack -> ipvs -> drain -> pods -> endpoints -> plan
 * started in that order and stopped in the reverse one; a part that fails to start stops those
 * already started. The parts talk through typed seams wired here: pods publish changes, the
 * plan publishes transitions and flushes, and each part reads the plan or the cache it needs.
 * Everything it touches comes in through `AgentDeps` (netlink, kube, clock, event sink), so
 * tests build it with stand-ins and runAgent (the CLI) with the real thing.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { systemClock } from '../time/clock.js';
import type { AgentDeps, AgentPorts } from './agent-deps.js';
import { ConntrackRunnable, type RunningJanitor } from './conntrack/index.js';
import { DrainRunnable } from './drain/index.js';
import { IpvsRunnable } from './ipvs/index.js';
import { DrainPlanner, PLAN_RUN_GAP_MS, PlanLoop } from './plan/index.js';
import { EndpointsRunnable } from './endpoints/index.js';
import type { DrainingPod } from './ipvs/ipvs-hold.js';
import type { RawSlice } from '../src/endpoints/slice-view.js';
import { RecentSet } from './recent-set.js';
import { makeAddressHolder } from './address-holder.js';
import { kubeEventSink, PodEvents, PodsRunnable, type PodCache } from './pods/index.js';
import { Runnables, type Runnable, type RunnableFailedError } from './runnable.js';
import { Topic } from './topic.js';
import { ForeignSessions, Handover } from './handover/index.js';
import { AgentMetrics, Health, StateKeeper, type AgentState, type StateOwner } from './runtime/index.js';

export type { AgentDeps, AgentPorts } from './agent-deps.js';

export class Agent {
  readonly metrics: AgentMetrics;
  /** This process (the state file's owner while it writes it; its handover socket's name). */
  readonly instance: StateOwner;
  private readonly log: Logger;
  /**
   * Where the agent is in its life (docs/handover.md), written only here: stop() began, SIGTERM
   * closed the listeners, a newer instance owns the state file (the handover reports it). The
   * parts get readers of these, never the fields.
   */
  private stopping = false;
  private handingOver = false;
  private supersededBy: StateOwner | undefined;
  /** The stop in progress or done (stop() runs once). */
  private stopped: Promise<void> | undefined;
  private readonly pods: PodsRunnable;
  private readonly endpoints: EndpointsRunnable;
  private readonly planner: DrainPlanner;
  private readonly state: StateKeeper;
  private readonly health: Health;
  private readonly conntrack: ConntrackRunnable;
  private readonly ipvs: IpvsRunnable;
  private readonly drain: DrainRunnable;
  private readonly plan: PlanLoop;
  private readonly runnables: Runnables;

  /** Each part is built after every part its options read (no closure over a later binding). */
  constructor(private readonly deps: AgentDeps) {
    const { config, netlink, kube } = deps;
    const clock = deps.clock ?? systemClock;
    const logger = deps.logger.child({ node: config.nodeName });
    const metrics = deps.metrics ?? new AgentMetrics();
    const stopping = (): boolean => this.stopping;
    this.log = logger;
    this.metrics = metrics;
    this.instance = { instance: `${config.nodeName}.${randomUUID().slice(0, 8)}`, startedAtMs: clock.now() };
    const events = new PodEvents(deps.eventSink ?? kubeEventSink(kube), config.nodeName, logger, () => clock.now(), { clock, dropped: (why) => metrics.eventsDropped.inc({ why }) });
    const foreign = new ForeignSessions();

    const pods = this.pods = new PodsRunnable({ kube, nodeName: config.nodeName, clock, logger, metrics, goneSlackMs: config.goneSlackMs, relistBackoffMaxMs: config.relistBackoffMaxMs, watchList: config.watchList });
    const { cache } = pods;
    const planner = this.planner = new DrainPlanner(cache);
    // This node's pods the pod watch lost a moment ago: their endpoints' flushes are the pod watch's.
    const recentLocal = new RecentSet(4096);
    // The slices the endpoint watch sees feed the conntrack restart sweep (subscribed below).
    const slicesUpserted = new Topic<RawSlice>();
    const slicesRemoved = new Topic<string>();
    const endpoints = this.endpoints = new EndpointsRunnable({
      kube, clock, logger, metrics, nodeName: config.nodeName, relistBackoffMaxMs: config.relistBackoffMaxMs,
      debounceMs: config.endpointDebounceMs, terminatingMaxMs: config.terminatingMaxMs, freshMs: config.viewFreshMs,
      // A host-network pod has no IP of its own for the pod watch to act on: its endpoints (by port) are the endpoint plan's, here too.
      isLocalPod: (uid, nodeName) => (nodeName === undefined || nodeName === config.nodeName) && ((cache.view(uid)?.ips.length ?? 0) > 0 || (planner.record(uid)?.ips.length ?? 0) > 0 || recentLocal.has(uid)),
      sliceUpserted: (slice) => slicesUpserted.publish(slice),
      sliceRemoved: (key) => slicesRemoved.publish(key),
    });
    const holder = makeAddressHolder({
      liveLocal: (address, exceptUid) => cache.liveHolder(address, clock.now(), exceptUid)?.view.key,
      endpointHolders: (address) => endpoints.index.holderUids(address),
      goneLocally: (uid) => recentLocal.has(uid),
      endpointKey: (uid) => endpoints.index.merged(uid)?.key,
    });
    const holderOf = (address: string, uid: string): string | undefined => holder.holderOf(address, uid);
    const conntrack = this.conntrack = new ConntrackRunnable({
      config, netlink, kube, clock, logger, metrics, events, plan: planner,
      liveHolder: holderOf,
      holderOf,
      ownership: { owns: (p, a, port) => endpoints.index.owns(p, a, port), ownedTargets: () => endpoints.index.ownedTargets(), serviceOf: (p, a, port) => endpoints.index.serviceOf(p, a, port) },
      heldLocally: (addresses) => holder.heldLocally(addresses),
      watchedIps: () => {
        const ips = new Set<string>();
        cache.forEachIp((ip) => ips.add(ip));
        for (const rec of planner.snapshot()) if (rec.state !== 'flushed') for (const ip of rec.ips) ips.add(ip);
        return ips;
      },
    });
    // What to hold: this node's draining pods (by IP) and the cluster's draining endpoints (by their slices' targets).
    const holdPlan = {
      draining: (): DrainingPod[] => {
        const local = planner.draining();
        const mine = new Set(local.map((p) => p.uid));
        return [...local, ...endpoints.draining().filter((p) => !mine.has(p.uid))];
      },
      isServing: (uid: string): boolean => planner.isServing(uid) || (planner.record(uid)?.state !== 'draining' && endpoints.isServing(uid)),
      takeHoldingChanged: (): boolean => {
        const a = planner.takeHoldingChanged();
        const b = endpoints.takeHoldingChanged();
        return a || b;
      },
    };
    const ipvs = this.ipvs = new IpvsRunnable({
      config, ipvs: netlink, clock, logger, metrics, plan: holdPlan, stopping,
      handingOverToNewer: () => this.handingOverToNewer(),
      flowPinningOptOuts: (heldUids) => {
        const out = cache.flowPinningOptOuts();
        for (const uid of endpoints.flowPinningOptOuts(heldUids)) out.add(uid);
        return out;
      },
    });
    const drain = this.drain = new DrainRunnable({
      config, clock, logger, metrics, events, conntrack: conntrack.api, cache, synced: pods.synced, refresh: () => pods.resync(), foreign,
      flowTimeouts: deps.flowTimeouts, datapathProbe: deps.datapathProbe, listenSocket: deps.listenSocket,
    });
    const state = this.state = new StateKeeper({
      stateFile: config.stateFile, owner: this.instance, clock, logger,
      superseded: () => this.supersededBy !== undefined,
      sources: {
        // Other nodes' draining endpoints only where the IPVS hold is on: they keep those holds
        // until the first slice list after a restart. On a conntrack-only node all they kept was
        // the flush of one that went while no agent ran, which the restart sweep does (its entries'
        // address is no current endpoint's), and every local change rewrote them all: the file
        // grew with the cluster's draining endpoints (a zone down: tens of thousands).
        pods: () => (ipvs.holding ? [...planner.snapshot(), ...endpoints.snapshot()] : planner.snapshot()),
        holds: () => ipvs.list(),
        // Stopping gracefully: the sessions still open have no caller waiting; the next agent continues them.
        sessions: () => [...drain.openRecords(this.instance.instance, this.stopping), ...foreign.list()],
      },
      resume: {
        // This node's pods go to the pod plan; other nodes' (an older agent recorded every pod it planned) to the endpoint plan.
        pods: (records) => {
          planner.resume(records.filter((r) => r.nodeName === config.nodeName));
          endpoints.resume(records.filter((r) => r.nodeName !== config.nodeName));
        },
        holds: (held) => ipvs.resume(held),
      },
    });
    const plan = this.plan = new PlanLoop({
      planner, cache, synced: () => pods.isSynced && endpoints.isSynced, resync: () => pods.resync(), hold: ipvs, holds: holdPlan, rewatch: (now) => conntrack.rewatch(now), save: () => state.save(),
      holdIntervalMs: config.holdIntervalMs, minRunGapMs: PLAN_RUN_GAP_MS, clock, logger, metrics, stopping, yielded: () => this.yielded(),
    });
    const handover = new Handover({
      owner: this.instance, logger, stopping, foreign, sessions: drain, ipvs, state,
      superseded: (by) => {
        this.supersededBy = by;
      },
    });
    this.health = new Health({
      config, kube, logger, registry: metrics.registry,
      ready: () => this.readiness(), holds: () => ipvs.list(), listenSocket: deps.listenSocket, acceptMigrationSysctl: deps.acceptMigrationSysctl,
    });

    // The seams: who reacts to what.
    pods.changes.subscribe((change) => {
      if (change.kind === 'remove' || change.prior === undefined || change.prior.ips.join() !== change.now.ips.join()) conntrack.ipsChanged();
      if (change.kind === 'remove') {
        if (change.gone.view.ips.length > 0) recentLocal.add(change.uid);
        drain.podRemoved(change.gone);
      }
      plan.podChanged(change);
    });
    const bothListed = (): void => {
      if (!pods.isSynced || !endpoints.isSynced) return;
      handover.takeIpvs();
      conntrack.synced();
      plan.requestRun();
    };
    pods.listed.subscribe(bothListed);
    slicesUpserted.subscribe((slice) => conntrack.sliceUpserted(slice));
    slicesRemoved.subscribe((key) => conntrack.sliceRemoved(key));
    endpoints.listed.subscribe(bothListed);
    // A relist after a gap: a pod that came and went in the gap left entries no flush will name; the sweep's rule finds them.
    pods.relisted.subscribe(() => conntrack.resweep());
    endpoints.relisted.subscribe(() => conntrack.resweep());
    endpoints.changed.subscribe(() => plan.requestRun());
    endpoints.flushes.subscribe((f) => conntrack.flushTargets(f));
    planner.transitions.subscribe((t) => drain.onTransition(t));
    planner.flushes.subscribe((pod) => conntrack.flush(pod));
    conntrack.flushed.subscribe(() => void state.save());
    ipvs.changed.subscribe(() => plan.markStateDirty());
    ipvs.gained.subscribe(() => plan.fullPassDue());
    drain.sessionsChanged.subscribe(() => {
      handover.publish();
      void state.save();
    });

    const eventsRecorder: Runnable = {
      name: 'events',
      start: () => Promise.resolve(),
      stop: async () => {
        await events.flush();
        events.stop();
      },
    };
    // Stopped in reverse: the Events in flight are flushed (a DrainInterrupted the API takes is
    // recorded in the sessions) before the state file's last write.
    this.runnables = new Runnables([state, eventsRecorder, handover, this.health, conntrack, ipvs, drain, pods, endpoints, plan], logger);
    // The one error channel: a part that failed after it started makes the agent not ready
    // (readiness) and stops every part; the entry point (runAgent) then fails with it.
    void this.runnables.failed.then(() => this.stop());
  }

  /** Settles with the first part that failed after it started (never rejects). */
  get failed(): Promise<RunnableFailedError> {
    return this.runnables.failed;
  }

  /** The first part that failed after it started, if any. */
  get failure(): RunnableFailedError | undefined {
    return this.runnables.failure;
  }

  /** The pod cache (tests, benches). */
  get cache(): PodCache {
    return this.pods.cache;
  }

  /** The stale-entry janitor, when --janitor is on. */
  get janitor(): RunningJanitor | undefined {
    return this.conntrack.janitor;
  }

  readiness(): { ready: boolean; why: string } {
    const failure = this.runnables.failure;
    if (failure !== undefined) return { ready: false, why: failure.message };
    if (this.stopping) return { ready: false, why: 'stopping' };
    if (this.handingOver) return { ready: false, why: 'handing over: answering held drain calls, accepting no new ones' };
    if (!this.pods.isSynced) return { ready: false, why: 'waiting for the first pod list' };
    if (!this.endpoints.isSynced) return { ready: false, why: 'waiting for the first EndpointSlice and Namespace lists' };
    if (!this.plan.planned) return { ready: false, why: 'waiting for the first drain plan' };
    if (!this.drain.listening) return { ready: false, why: 'drain API not listening' };
    return { ready: true, why: 'ok' };
  }

  /** This instance edits IPVS (no other instance overlaps, or each handed its holds over): tests, bench. */
  get ownsIpvs(): boolean {
    return this.ipvs.owns;
  }

  /** Pods re-planned since start: one per pod an event touched (tests, bench/scale). */
  get plannedPods(): number {
    return this.planner.plannedTotal;
  }

  /** The drain records, held servers and open sessions (tests, the state file). */
  snapshot(): AgentState {
    return this.state.snapshot();
  }

  async start(): Promise<AgentPorts> {
    const { config } = this.deps;
    // The state file first: a process that fails to start below has loaded it and never writes it.
    await this.runnables.start();
    this.state.allowWrites();
    this.plan.kick();
    const ports = { drainPort: this.drain.port, metricsPort: this.health.port, probesPort: this.health.probesPort };
    this.log.info({ drainAddress: config.drainAddress, drainPort: ports.drainPort, metricsAddress: config.metricsAddress, metricsPort: ports.metricsPort, metricsSecure: config.metricsSecure, probesAddress: config.probesAddress, probesPort: ports.probesPort, stateFile: config.stateFile, ipvsHold: this.ipvs.holding, instance: this.instance.instance }, 'agent started');
    return ports;
  }

  /**
   * SIGTERM (docs/handover.md): closes both listeners (new connections go to the other agent
   * on the same ports), keeps everything else running until every held drain call has been
   * answered, then stops. The pod's terminationGracePeriodSeconds must cover the longest drain.
   */
  async handOver(): Promise<void> {
    if (this.handingOver || this.stopping) return;
    this.handingOver = true;
    this.log.info({ held: this.drain.held, activeDrains: this.drain.active }, 'handover: listeners closed; answering the held drain calls as their drains end');
    this.drain.stopAccepting();
    this.health.stopAccepting();
    if (this.yielded()) await this.ipvs.yieldFlowpin();
    await this.drain.idle();
    this.log.info({ handedOver: this.drain.active }, 'handover: every held drain call answered; stopping');
    await this.stop();
  }

  /** Stops every part (reverse start order); holds stay in IPVS and in the state file for the next agent, open sessions are handed over. */
  stop(): Promise<void> {
    this.stopping = true;
    // Once: a second call (the entry point after a failure stopped the agent) waits for the first.
    this.stopped ??= this.stopParts();
    return this.stopped;
  }

  private async stopParts(): Promise<void> {
    await this.runnables.stop();
    this.log.info({ holds: this.ipvs.list().length }, 'agent stopped; holds left in place for the next agent');
  }

  /** Handing over (SIGTERM) while a newer instance, connected, owns the state file. */
  private handingOverToNewer(): boolean {
    return this.handingOver && this.supersededBy !== undefined;
  }

  /**
   * Handed over to a newer instance that is connected and edits IPVS: it runs the plan (IPVS
   * hold, ghost cleanup) for the node; this one only answers its held calls (the watch still
   * ends drains of pods that go). Without a newer instance (plain SIGTERM) it keeps holding.
   */
  private yielded(): boolean {
    return this.handingOverToNewer() && !this.ipvs.owns;
  }

  /** Runs the plan now (tests); resolves when its IPVS and state-file work is done. */
  runNow(): Promise<void> {
    return this.plan.runNow();
  }
}
