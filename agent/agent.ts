/**
 * The node agent, wired: watch -> cache -> drain plan -> IPVS hold, ghost cleanup, events,
 * state file; the drain API and the health/metrics server. Everything it touches comes in
 * through `AgentDeps` (netlink, kubeconfig, clock, event sink), so tests build it with
 * stand-ins and the CLI with the real thing.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { AgentConfig } from '../src/config/agent.js';
import type { PodRecord, Transition } from '../src/drain-plan.js';
import { NetlinkError, type ConntrackApi, type ConntrackEventsApi, type IpvsApi } from 'netlink-native/types';
import { systemClock, type Clock, type TimerHandle } from '../kube/clock.js';
import { DrainApi } from './drain-api.js';
import { DrainPlanner, samePlanInput } from './drain-planner.js';
import { DrainSessions, type SessionPod } from './drain-sessions.js';
import { probeFlowVisibility, type DatapathProbeOptions } from './flow-visibility-probe.js';
import { SyncGate } from './sync-gate.js';
import type { FlowVisibility } from '../src/flow-visibility.js';
import { kubeEventSink, PodEvents, type EventPod, type EventSink } from './events.js';
import { readFlowTimeouts } from './flow-timeouts.js';
import type { FlowTimeouts } from './flows.js';
import { GhostCleanup, type FlushReport } from './ghost-cleanup.js';
import { closeListener, createHealthServer, listen } from './health-server.js';
import { followInstance, HandoverListener, type FollowLink } from './handover-link.js';
import { IndexedConntrack } from './indexed-conntrack.js';
import { IpvsHold, type HeldServer } from './ipvs-hold.js';
import { IpvsOwnership } from './ipvs-ownership.js';
import { enableAcceptMigration } from './accept-migration.js';
import { AgentMetrics } from './metrics.js';
import { PodCache } from './pod-cache.js';
import { loadState, StateWriter, STATE_VERSION, type AgentState, type SessionRecord, type StateOwner } from './state-file.js';
import { PodWatch, podUid } from './watch.js';
import type { FlowpinController } from './flowpin/controller.js';
import { createAgentFlowpin, flowpinSkip } from './flowpin/wire.js';
import type { RunningJanitor } from './janitor/index.js';
import type { KubeConnection } from '../kube/connection.js';

export interface AgentDeps {
  config: AgentConfig;
  logger: Logger;
  /** openConntrackEvents is optional: without it (or with --conntrack-events=false) every conntrack answer comes from a dump. */
  netlink: ConntrackApi & IpvsApi & Partial<ConntrackEventsApi>;
  /** The API server (the watch, Events): kube/load.ts, or a library KubeConfig. */
  kube: KubeConnection;
  clock?: Clock;
  flowTimeouts?: FlowTimeouts;
  eventSink?: EventSink;
  metrics?: AgentMetrics;
  /** Where the flow-visibility probe reads the node (tests: a fake sysfs). */
  datapathProbe?: DatapathProbeOptions;
  /**
   * Opens a listening TCP socket with SO_REUSEPORT and returns its descriptor (the CLI passes
   * netlink-native's listenReusePort): a second agent on the node then binds the same ports
   * (zero-gap handover). Without it the servers listen the ordinary way (tests).
   */
  listenSocket?: (host: string, port: number) => number;
  /** Where net.ipv4.tcp_migrate_req is set for the handover (tests: a file of their own). */
  acceptMigrationSysctl?: string;
}

export interface AgentPorts {
  drainPort: number;
  metricsPort: number;
}

function splitKey(key: string): { namespace: string; name: string } {
  const at = key.indexOf('/');
  return at < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, at), name: key.slice(at + 1) };
}

function eventPodOf(rec: Pick<PodRecord, 'uid' | 'key' | 'nodeName' | 'ips'>): EventPod {
  return { uid: rec.uid, ...splitKey(rec.key), nodeName: rec.nodeName, ips: rec.ips };
}

export class Agent {
  readonly metrics: AgentMetrics;
  readonly cache: PodCache;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly hold: IpvsHold;
  private readonly flowpin: FlowpinController | undefined;
  private readonly sessions: DrainSessions;
  private readonly drainApi: DrainApi;
  /** Open once the first complete pod list is in: the drain API holds unknown ids until then. */
  private readonly synced: SyncGate;
  /** Whether conntrack sees this node's pod traffic (--flow-visibility, probed at start). */
  private flowVisibility: FlowVisibility | undefined;
  private readonly cleanup: GhostCleanup;
  private readonly events: PodEvents;
  private readonly watch: PodWatch;
  private readonly writer: StateWriter;
  private readonly health: Server;
  private readonly planner: DrainPlanner;
  private ipvsOn: boolean;
  private drainListening = false;
  /** The plan ran on a synced cache at least once (readiness). */
  private planned = false;
  private stopping = false;
  private timers: TimerHandle[] = [];
  private runScheduled: TimerHandle | undefined;
  /** The timer of the earliest deleting pod's grace end (planner.nextDeadline). */
  private deadlineTimer: { at: number; handle: TimerHandle } | undefined;
  /** The first complete list is in and every pod was queued for its first plan. */
  private syncSeen = false;
  /** Pod IPs changed since the conntrack event index was last told (told at most once a second). */
  private watchedIpsStale = true;
  private watchedIpsToldAt = Number.NEGATIVE_INFINITY;
  /** The hold interval elapsed: re-assert every hold (the proxy may have reset weights). */
  private reassertDue = true;
  /** The full hold pass in flight (startReassert), and whether another was asked for meanwhile. */
  private reasserting: Promise<void> | undefined;
  private reassertAgain = false;
  /** Records or holds changed since the state file was last written. */
  private stateDirty = true;
  private running: Promise<void> | undefined;
  private again = false;
  /** The conntrack event index, when --conntrack-events is on and it opened. */
  private indexed: IndexedConntrack | undefined;
  /** The stale-entry janitor, when --janitor is on. */
  janitor: RunningJanitor | undefined;
  /** This process (the state file's owner while it writes it; its handover socket's name). */
  readonly instance: StateOwner;
  private readonly handover: HandoverListener;
  /** Older instances followed over their handover socket. */
  private readonly following: FollowLink[] = [];
  /** Whether this instance edits IPVS while another overlaps (ipvs-ownership.ts). */
  private readonly ipvsOwner: IpvsOwnership;
  /** Open sessions that a live older instance holds (drain id -> record). */
  private readonly foreign = new Map<string, SessionRecord>();
  /** start() finished: only then may this process write the state file (it has loaded it). */
  private stateWritable = false;
  /** A newer instance owns the state file: this one no longer writes it. */
  private supersededBy: StateOwner | undefined;
  /** SIGTERM: the listeners are closed; held calls are answered as their drains end. */
  private handingOver = false;

  constructor(private readonly deps: AgentDeps) {
    const { config, logger, netlink, kube } = deps;
    this.clock = deps.clock ?? systemClock;
    this.log = logger.child({ node: config.nodeName });
    this.metrics = deps.metrics ?? new AgentMetrics();
    this.cache = new PodCache(config.goneSlackMs);
    this.planner = new DrainPlanner(this.cache, {
      transition: (t, rec) => this.onTransition(t, rec),
      // The cleanup re-checks every IP against the cache just before its pass (and counts reuse).
      flush: (pod) => this.cleanup.request(pod),
    });
    this.ipvsOn = config.ipvsHold;
    this.instance = { instance: `${config.nodeName}.${randomUUID().slice(0, 8)}`, startedAtMs: this.clock.now() };
    const metrics = this.metrics;
    // The drain sessions and the ghost cleanup ask the event index when it is open, the dump otherwise.
    const conntrack: ConntrackApi = {
      listConntrack: (o) => (this.indexed ?? netlink).listConntrack(o),
      deleteConntrack: (o) => (this.indexed ?? netlink).deleteConntrack(o),
      deleteConntrackEntries: (e) => netlink.deleteConntrackEntries(e),
      scanDnatEntries: (o) => netlink.scanDnatEntries(o),
      conntrackStats: () => netlink.conntrackStats(),
    };
    this.events = new PodEvents(deps.eventSink ?? kubeEventSink(kube), config.nodeName, this.log, () => this.clock.now());
    this.hold = new IpvsHold({
      ipvs: netlink,
      logger: this.log,
      skipService: flowpinSkip(config),
      hooks: {
        restored: (action) => metrics.ipvsRestores.inc({ action }),
        changed: () => {
          metrics.ipvsServersHeld.set(this.hold.size);
          this.stateDirty = true;
        },
      },
    });
    this.flowpin = createAgentFlowpin({ config, ipvs: netlink, logger: this.log, held: () => this.hold.list(), optOutPodUids: () => this.cache.flowPinningOptOuts(), clock: this.clock, registry: metrics.registry });
    this.sessions = new DrainSessions(
      {
        clock: this.clock,
        conntrack,
        flowIdleMs: config.flowIdleMs,
        pollIntervalMs: config.flowPollIntervalMs,
        timeouts: deps.flowTimeouts ?? readFlowTimeouts(),
        logger: this.log,
        flowVisibility: () => this.flowVisibility ?? { visible: true, source: 'probe', signals: [], reason: 'not probed yet' },
        onStart: (pod, settings, visibility) => {
          metrics.drainsActive.set(this.sessions.active);
          const until = visibility?.visible === false ? `lasts its maximum, ${settings.drainMs} ms, because ${visibility.reason}` : `at least ${settings.minDrainMs} ms, at most ${settings.drainMs} ms, until no open flow to ${pod.ips.join(', ')}`;
          this.events.drainStarted(pod, `drain started by the preStop hook: ${until}`);
        },
        onFinish: (pod, summary) => {
          metrics.drainsActive.set(this.sessions.active);
          metrics.drains.inc({ ended: summary.ended });
          const flows = summary.flowsUnknown === undefined ? `open flows at the last check: ${summary.openFlows ?? 'unknown'}` : `open flows unknown: ${summary.flowsUnknown}`;
          this.events.drainFinished(pod, summary.ended, `after ${summary.elapsedMs} ms; ${flows}`);
        },
        onChange: () => {
          this.handover.publish();
          void this.saveState();
        },
      },
      (drainId) => this.cache.byDrain(drainId),
      (drainId) => this.takeForeign(drainId),
    );
    this.synced = new SyncGate(this.clock);
    this.ipvsOwner = new IpvsOwnership({ clock: this.clock, logger: this.log, gained: () => this.onIpvsGained() });
    this.handover = new HandoverListener(this.instance, this.log, () => this.sessions.openRecords(this.instance.instance, false), (by) => {
      if (by === undefined) this.log.info('handover: the newer agent instance went away; this one owns the state file again');
      this.supersededBy = by;
      if (by === undefined) void this.reclaimIpvs();
    }, (to) => this.yieldIpvs(to));
    this.drainApi = new DrainApi({ sessions: this.sessions, maxDrains: config.maxDrains, logger: this.log, synced: this.synced, unknownIdWaitMs: config.unknownIdWaitMs, onAnswer: (status) => metrics.drainApiAnswers.inc({ code: String(status) }) });
    this.cleanup = new GhostCleanup({
      conntrack,
      clock: this.clock,
      windowMs: config.flushWindowMs,
      logger: this.log,
      liveHolder: (ip, goneUid) => this.cache.liveHolder(ip, this.clock.now(), goneUid)?.view.key,
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
    this.watch = new PodWatch(
      { connection: kube, backoffMaxMs: config.relistBackoffMaxMs, clock: this.clock, logger: this.log, watchList: config.watchList },
      {
        upsert: (pod) => {
          const uid = podUid(pod);
          const prior = this.cache.view(uid);
          const now = this.cache.upsert(pod).view;
          if (prior !== undefined && samePlanInput(prior, now)) return; // a relist or a field the plan does not read
          if (prior === undefined || prior.ips.join() !== now.ips.join()) this.watchedIpsStale = true;
          this.planner.touched(uid, prior);
          this.scheduleRun();
        },
        remove: (uid) => {
          const gone = this.cache.remove(uid);
          if (gone === undefined) return;
          this.watchedIpsStale = true;
          this.sessions.podGone(gone.view.uid, gone);
          this.planner.touched(uid, gone.view);
          this.scheduleRun();
        },
        keys: () => this.cache.knownUids(),
        synced: () => {
          this.log.info({ pods: this.cache.size }, 'watch: first list synced; ready');
          this.synced.open();
          this.takeIpvs();
          this.scheduleRun();
        },
        relisting: (delayMs) => this.log.info({ retryInMs: delayMs }, 'watch: resourceVersion too old (410 Gone); relisting from the watch cache'),
        restarting: (error, delayMs) => {
          metrics.watchRestarts.inc();
          this.log.warn({ err: error, retryInMs: delayMs }, 'watch: failed; restarting after backoff');
        },
      },
    );
    this.writer = new StateWriter(config.stateFile, () => this.snapshot(), (error) => this.log.error({ err: error, stateFile: config.stateFile }, 'state file write failed; holds are still applied, retried on the next change'));
    this.health = createHealthServer({ registry: metrics.registry, ready: () => this.readiness(), logger: this.log, holds: () => this.hold.list() });
  }

  readiness(): { ready: boolean; why: string } {
    if (this.stopping) return { ready: false, why: 'stopping' };
    if (this.handingOver) return { ready: false, why: 'handing over: answering held drain calls, accepting no new ones' };
    if (!this.watch.synced) return { ready: false, why: 'waiting for the first pod list' };
    if (!this.planned) return { ready: false, why: 'waiting for the first drain plan' };
    if (!this.drainListening) return { ready: false, why: 'drain API not listening' };
    return { ready: true, why: 'ok' };
  }

  /** Pods re-planned since start: one per pod an event touched (tests, bench/scale). */
  get plannedPods(): number {
    return this.planner.plannedTotal;
  }

  /** The drain records and held servers (tests, the state file). */
  snapshot(): AgentState {
    // Stopping gracefully: the sessions still open have no caller waiting; the next agent continues them.
    const sessions = [...this.sessions.openRecords(this.instance.instance, this.stopping), ...this.foreign.values()];
    return { version: STATE_VERSION, writtenAt: new Date(this.clock.now()).toISOString(), owner: this.instance, pods: this.planner.snapshot(), holds: this.hold.list(), sessions };
  }

  /** Writes the state file, unless this process never loaded it (start() did not finish) or a newer instance owns it. */
  private saveState(): Promise<void> {
    if (!this.stateWritable || this.supersededBy !== undefined) return Promise.resolve();
    return this.writer.save();
  }

  async start(): Promise<AgentPorts> {
    const { config } = this.deps;
    // The state file first: a process that fails to bind below has loaded it and never writes it.
    const resumed = await this.resumeState();
    await this.handover.listen().catch((error: unknown) => this.log.warn({ err: error }, 'handover socket: could not listen; a newer agent will not see this one\'s sessions'));
    this.followOlder(resumed);
    // Only with SO_REUSEPORT listeners (the CLI): tests that listen the ordinary way leave the node alone.
    if (this.deps.listenSocket !== undefined) await enableAcceptMigration(this.log, this.deps.acceptMigrationSysctl);
    const metricsPort = await listen(this.health, config.metricsPort, config.metricsAddress, this.deps.listenSocket);
    await this.openEventIndex();
    await this.probeIpvs();
    await this.probeFlowVisibility();
    // Before the first pod list: a call for an id not known yet is held until the list is in.
    const drainPort = await this.drainApi.listen(config.drainPort, config.drainAddress, this.deps.listenSocket);
    this.drainListening = true;
    this.watch.start();
    if (config.janitor) {
      const { startJanitor } = await import('./janitor/index.js');
      this.janitor = startJanitor({ connection: this.deps.kube, conntrack: this.deps.netlink, registry: this.metrics.registry, logger: this.log, clock: this.clock, graceMs: config.janitorGraceMs, intervalMs: config.janitorIntervalMs, backoffMaxMs: config.relistBackoffMaxMs });
    }
    this.timers.push(this.clock.setInterval(() => {
      this.reassertDue = true;
      this.scheduleRun();
    }, config.holdIntervalMs));
    // While nothing drains the hold does no IPVS call; this keeps its address index fresh so a
    // new drain edits its known servers at once (bench/agent: watch event -> weight 0).
    this.timers.push(this.clock.setInterval(() => void this.refreshIpvsIndex(), Math.max(10_000, config.holdIntervalMs * 10)));
    void this.refreshIpvsIndex();
    if (this.ipvsOn && this.ipvsOwner.owns) this.flowpin?.start();
    this.timers.push(this.clock.setInterval(() => void this.pollStats(), config.statsIntervalMs));
    void this.pollStats();
    this.stateWritable = true;
    this.stateDirty = true;
    this.scheduleRun();
    this.log.info({ drainAddress: config.drainAddress, drainPort, metricsAddress: config.metricsAddress, metricsPort, stateFile: config.stateFile, ipvsHold: this.ipvsOn, instance: this.instance.instance }, 'agent started');
    return { drainPort, metricsPort };
  }

  /**
   * SIGTERM (docs/handover.md): closes both listeners (new connections go to the other agent
   * on the same ports), keeps everything else running until every held drain call has been
   * answered, then stops. The pod's terminationGracePeriodSeconds must cover the longest drain.
   */
  async handOver(): Promise<void> {
    if (this.handingOver || this.stopping) return;
    this.handingOver = true;
    const held = this.drainApi.held;
    this.log.info({ held, activeDrains: this.sessions.active }, 'handover: listeners closed; answering the held drain calls as their drains end');
    this.drainApi.stopAccepting();
    closeListener(this.health);
    if (this.yielded) await this.flowpin?.stop();
    await this.drainApi.idle();
    this.log.info({ handedOver: this.sessions.active }, 'handover: every held drain call answered; stopping');
    await this.stop();
  }

  /** Stops; holds stay in IPVS and in the state file for the next agent, open sessions are handed over. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const left = this.sessions.openRecords(this.instance.instance, true);
    // The holds go with the sessions, unless a newer instance took them already (they may be stale since).
    if (this.handover.connected > 0) await this.handover.bye(left, this.ipvsOwner.owns ? this.hold.list() : []);
    else this.handover.close();
    for (const f of this.following) f.close();
    this.ipvsOwner.close();
    for (const t of this.timers) t.cancel();
    this.runScheduled?.cancel();
    this.deadlineTimer?.handle.cancel();
    await this.watch.stop();
    await this.janitor?.stop();
    this.cleanup.stop();
    this.sessions.close();
    await this.drainApi.close();
    this.synced.cancel();
    await this.running?.catch(() => undefined);
    await this.reasserting;
    await this.flowpin?.stop();
    this.indexed?.close();
    this.indexed = undefined;
    await this.saveState();
    await this.events.flush();
    await new Promise<void>((resolve) => {
      this.health.close(() => resolve());
      this.health.closeAllConnections();
    });
    this.log.info({ holds: this.hold.size }, 'agent stopped; holds left in place for the next agent');
  }

  /** Runs the plan now (tests); resolves when its IPVS and state-file work is done. */
  async runNow(): Promise<void> {
    this.again = true;
    this.running ??= this.runLoop();
    await this.running;
    while (this.reasserting !== undefined) await this.reasserting;
  }

  private async resumeState(): Promise<AgentState | undefined> {
    const { stateFile } = this.deps.config;
    const loaded = await loadState(stateFile, this.clock.now());
    if (loaded.kind === 'missing') {
      this.log.info({ stateFile }, 'no state file: starting empty');
      return undefined;
    }
    if (loaded.kind === 'corrupt') {
      this.log.error({ stateFile, reason: loaded.reason, movedTo: loaded.movedTo }, 'state file unreadable: starting empty (draining pods are found again from the API and IPVS)');
      return undefined;
    }
    this.planner.resume(loaded.state.pods);
    this.hold.resume(loaded.state.holds);
    this.metrics.ipvsServersHeld.set(this.hold.size);
    this.log.info({ stateFile, pods: loaded.state.pods.length, holds: this.hold.size, sessions: loaded.state.sessions.length, owner: loaded.state.owner?.instance, writtenAt: loaded.state.writtenAt }, 'state file loaded: resuming holds');
    return loaded.state;
  }

  /**
   * The sessions of the state file: those handed over are continued here; those of another
   * instance are followed over its handover socket (it answers them, or leaves them with `bye`,
   * or dies: then they were cut short). The file's owner is followed too, so it stops writing.
   */
  private followOlder(state: AgentState | undefined): void {
    if (state === undefined) return;
    const holders = new Set<string>();
    if (state.owner !== undefined) holders.add(state.owner.instance);
    for (const rec of state.sessions) {
      if (rec.handedOver) this.resumeSession(rec, false);
      else {
        holders.add(rec.holder);
        this.foreign.set(rec.drainId, rec);
      }
    }
    holders.delete(this.instance.instance);
    for (const holder of holders) {
      this.ipvsOwner.expect(holder);
      const drop = (): SessionRecord[] => {
        const mine = [...this.foreign.values()].filter((r) => r.holder === holder);
        for (const r of mine) this.foreign.delete(r.drainId);
        return mine;
      };
      const link = followInstance(holder, this.instance, this.log, {
        holds: (held) => this.adoptHolds(holder, held),
        sessions: (list) => {
          drop();
          for (const r of list) if (!this.sessions.has(r.drainId)) this.foreign.set(r.drainId, { ...r, holder });
          void this.saveState();
        },
        bye: (list, held) => {
          this.adoptHolds(holder, held);
          drop();
          this.log.info({ from: holder, sessions: list.length }, 'handover: the older agent exited gracefully; continuing the drains it left');
          for (const r of list) this.resumeSession({ ...r, holder }, false);
        },
        lost: () => {
          this.ipvsOwner.settled(holder);
          if (this.stopping) return;
          const cut = drop();
          if (cut.length > 0) this.log.warn({ from: holder, sessions: cut.length }, 'handover: the agent instance that held these drain calls is gone without handing them over (crash or kill): drains interrupted');
          for (const r of cut) this.resumeSession(r, true);
        },
      });
      this.following.push({
        take: () => {
          link.take();
          this.ipvsOwner.asked(holder);
        },
        close: () => link.close(),
      });
    }
  }

  /** This instance edits IPVS (no other instance overlaps, or each handed its holds over): tests, bench. */
  get ownsIpvs(): boolean {
    return this.ipvsOwner.owns;
  }

  /** The first pod list is in: ask every older instance followed to hand IPVS over. */
  private takeIpvs(): void {
    for (const f of this.following) f.take();
  }

  /** An older instance's holds (its original weights win over weights this one only assumed). */
  private adoptHolds(holder: string, held: HeldServer[]): void {
    const changed = this.hold.adopt(held);
    this.log.info({ from: holder, holds: held.length, adopted: changed }, 'handover: the older agent instance handed its IPVS holds over');
    this.ipvsOwner.settled(holder);
  }

  /** A newer instance takes IPVS over: stop editing it, let the edits in flight finish, hand the holds over. */
  private async yieldIpvs(to: string): Promise<HeldServer[]> {
    this.ipvsOwner.handOver(to);
    await this.flowpin?.stop();
    await this.running;
    while (this.reasserting !== undefined) await this.reasserting;
    await this.hold.idle();
    return this.hold.list();
  }

  /** The newer instance went away: edit IPVS again, with the holds it wrote to the state file. */
  private async reclaimIpvs(): Promise<void> {
    if (this.stopping) return;
    const loaded = await loadState(this.deps.config.stateFile, this.clock.now());
    if (loaded.kind === 'loaded') this.hold.adopt(loaded.state.holds);
    this.ipvsOwner.reclaim();
  }

  /** This instance edits IPVS from now on: one full pass re-asserts every hold (and finds what changed meanwhile). */
  private onIpvsGained(): void {
    this.log.info({ holds: this.hold.size }, 'handover: this agent instance edits IPVS now');
    this.reassertDue = true;
    this.stateDirty = true;
    if (!this.stateWritable || this.stopping) return; // start() schedules the first run
    if (this.ipvsOn) this.flowpin?.start();
    this.scheduleRun();
  }

  /** A session begun by another instance: continued here (DrainFinished once); `interrupted`: a crash cut its call short. */
  private resumeSession(rec: SessionRecord, interrupted: boolean): void {
    if (this.sessions.has(rec.drainId)) return;
    const pod = this.sessionPodOfRecord(rec);
    if (interrupted) {
      this.metrics.drainsInterrupted.inc();
      this.log.warn({ pod: rec.key, ips: rec.ips, drainId: rec.drainId, holder: rec.holder, startedAtMs: rec.startedAtMs }, 'drain interrupted: the agent holding its preStop call died; the kubelet saw a reset and went on');
      this.events.drainInterrupted(pod, `the conndrain agent instance holding this pod's preStop call (${rec.holder}) stopped without answering it (crash or kill); the kubelet ended the hook early. The drain (IPVS hold, flow count) goes on; started ${new Date(rec.startedAtMs).toISOString()}`);
    }
    if (rec.startedPosted) this.events.drainResumed(pod);
    this.sessions.resume(rec);
  }

  /** A drain call here for a session a live older instance holds: continued here (no second DrainStarted). */
  private takeForeign(drainId: string): SessionRecord | undefined {
    const rec = this.foreign.get(drainId);
    if (rec === undefined) return undefined;
    this.foreign.delete(drainId);
    if (rec.startedPosted) this.events.drainResumed(this.sessionPodOfRecord(rec));
    return rec;
  }

  private sessionPodOfRecord(rec: SessionRecord): SessionPod {
    return { uid: rec.uid, key: rec.key, ...splitKey(rec.key), nodeName: rec.nodeName, ips: rec.ips };
  }

  /** --conntrack-events: open the event index (a failure leaves the agent on dump passes). */
  private async openEventIndex(): Promise<void> {
    const { config } = this.deps;
    const open = this.deps.netlink.openConntrackEvents?.bind(this.deps.netlink);
    if (!config.conntrackEvents) {
      this.log.info('conntrack events off (--conntrack-events=false): open flows and ghost entries from dump passes');
      return;
    }
    if (open === undefined) {
      this.log.warn('conntrack events: this netlink has no event index; dump passes only');
      return;
    }
    try {
      const index = await open();
      const metrics = this.metrics;
      this.indexed = new IndexedConntrack(this.deps.netlink, index, this.log, {
        fallback: (use) => metrics.indexFallbacks.inc({ use }),
        verifyLeftovers: (n) => metrics.indexVerifyLeftovers.inc(n),
      });
      await this.indexed.watch(this.watchedIps());
      this.metrics.observeIndexStats(this.indexed.stats());
      this.log.info({ watched: this.indexed.stats().watchedAddresses, filter: this.indexed.stats().filter }, 'conntrack events: on (index of the managed pods\' flows; dump passes verify deletions)');
    } catch (error) {
      this.indexed = undefined;
      this.log.warn({ err: error }, 'conntrack events: could not open the event index; dump passes only');
    }
  }

  /** Watched by the event index: the IPs of every managed pod known and of every pod not yet flushed. */
  private watchedIps(): Set<string> {
    const ips = new Set<string>();
    this.cache.forEachIp((ip) => ips.add(ip));
    for (const rec of this.planner.snapshot()) if (rec.state !== 'flushed') for (const ip of rec.ips) ips.add(ip);
    return ips;
  }

  /** --flow-visibility: where conntrack cannot see pod traffic, every adaptive drain lasts its maximum. */
  private async probeFlowVisibility(): Promise<void> {
    const visibility = await probeFlowVisibility(this.deps.config.flowVisibility, this.deps.datapathProbe);
    this.flowVisibility = visibility;
    this.metrics.flowsVisible.set(visibility.visible ? 1 : 0);
    if (visibility.visible) this.log.info({ flowVisibility: visibility.source, signals: visibility.signals }, `flow visibility: ${visibility.reason}`);
    else this.log.warn({ flowVisibility: visibility.source, signals: visibility.signals }, `flow visibility: open flows unknown; every adaptive drain lasts its maximum: ${visibility.reason}`);
  }

  private async probeIpvs(): Promise<void> {
    if (!this.ipvsOn) {
      this.log.info('IPVS hold off (--ipvs-hold=false): conntrack-only');
      this.metrics.ipvsAvailable.set(0);
      return;
    }
    try {
      await this.deps.netlink.listServices();
      this.metrics.ipvsAvailable.set(1);
    } catch (error) {
      if (error instanceof NetlinkError && error.code === 'EIPVSUNAVAILABLE') this.disableIpvs();
      else this.log.warn({ err: error }, 'IPVS probe failed; holding anyway and retrying every interval');
    }
  }

  private disableIpvs(): void {
    if (!this.ipvsOn) return;
    this.ipvsOn = false;
    this.metrics.ipvsAvailable.set(0);
    this.log.warn('IPVS is not available on this node: running conntrack-only (no IPVS hold)');
  }

  /**
   * Handing over to a newer instance that is connected: it runs the plan (IPVS hold, ghost
   * cleanup) for the node; this one only answers its held calls (the watch still ends drains
   * of pods that go). Without a newer instance (plain SIGTERM) it keeps holding until it exits.
   */
  private get yielded(): boolean {
    return this.handingOver && this.supersededBy !== undefined && !this.ipvsOwner.owns;
  }

  private scheduleRun(): void {
    if (this.stopping || this.yielded || this.runScheduled !== undefined) return;
    this.runScheduled = this.clock.setTimeout(() => {
      this.runScheduled = undefined;
      this.again = true;
      this.running ??= this.runLoop();
    }, 0);
  }

  private async runLoop(): Promise<void> {
    try {
      while (this.again && !this.stopping) {
        this.again = false;
        try {
          await this.runOnce();
        } catch (error) {
          this.log.error({ err: error }, 'plan run failed; retried on the next interval');
        }
      }
    } finally {
      this.running = undefined;
    }
  }

  /**
   * One run: re-plan the pods touched since the last one (and deleting pods whose grace
   * elapsed), then re-assert the holds. Work is proportional to what changed, not to the
   * number of pods in the cluster.
   */
  private async runOnce(): Promise<void> {
    const now = this.clock.now();
    let planned = false;
    if (this.watch.synced) {
      if (!this.syncSeen) {
        this.syncSeen = true;
        this.planner.touchAll(this.cache.knownUids());
      }
      this.planner.touchDue(now);
      if (this.planner.pending > 0) {
        planned = true;
        if (this.planner.plan(now)) this.stateDirty = true;
      }
      this.armDeadline();
    }
    // Not synced yet (e.g. API down after a restart): the planner holds what the state file says is draining.
    const draining = this.planner.draining();
    this.metrics.podsCached.set(this.cache.size);
    // A run for events that changed no hold (a new pod, a Ready pod) does no IPVS pass. One
    // that changed holds edits only the changed pods' known servers (no scan of every service);
    // the interval re-asserts every hold with a full pass.
    const changed = this.planner.takeHoldingChanged();
    const fullPass = this.reassertDue || !this.watch.synced;
    this.reassertDue = false;
    if (this.ipvsOn && this.ipvsOwner.owns && (changed || fullPass)) {
      try {
        // A newly draining pod the address index knows no server of: scan now rather than at the interval.
        const unindexed = changed ? await this.hold.syncChanged(draining, this.servingHeldUids()) : 0;
        if (fullPass || unindexed > 0) this.startReassert();
        if (this.flowpin !== undefined) void this.flowpin.sync().catch(() => undefined);
      } catch (error) {
        if (error instanceof NetlinkError && error.code === 'EIPVSUNAVAILABLE') this.disableIpvs();
        else this.log.warn({ err: error }, 'IPVS hold pass failed; retried next interval');
      }
    }
    this.metrics.ipvsServersHeld.set(this.hold.size);
    // After the hold: the watched set is not on the path from a watch event to weight 0.
    if (this.indexed !== undefined && planned && this.watchedIpsStale && now - this.watchedIpsToldAt >= 1000) {
      this.watchedIpsStale = false;
      this.watchedIpsToldAt = now;
      void this.indexed.watch(this.watchedIps());
    }
    // Written in the background (coalesced), only after a change: an fsync must not delay the next event's hold.
    if (this.stateDirty) {
      this.stateDirty = false;
      void this.saveState();
    }
    if (this.watch.synced) this.planned = true;
  }

  /**
   * The full hold pass (scan every service, restore what the proxy reset), not awaited by the
   * run loop: its scan runs beside the IPVS queue, so a watch event's edits do not wait for it.
   * One at a time; one asked for meanwhile runs after it.
   */
  private startReassert(): void {
    if (!this.ipvsOwner.owns) return;
    if (this.reasserting !== undefined) {
      this.reassertAgain = true;
      return;
    }
    this.reasserting = (async () => {
      do {
        this.reassertAgain = false;
        try {
          await this.hold.reassert(() => ({ draining: this.planner.draining(), servingUids: this.servingHeldUids() }));
        } catch (error) {
          if (error instanceof NetlinkError && error.code === 'EIPVSUNAVAILABLE') this.disableIpvs();
          else this.log.warn({ err: error }, 'IPVS hold pass failed; retried next interval');
        }
        this.metrics.ipvsServersHeld.set(this.hold.size);
      } while (this.reassertAgain && this.ipvsOn && !this.stopping && this.ipvsOwner.owns);
    })().finally(() => {
      this.reasserting = undefined;
    });
  }

  /** Pods with held servers that the API shows serving again (their release restores the weights). */
  private servingHeldUids(): Set<string> {
    const serving = new Set<string>();
    for (const h of this.hold.list()) if (this.planner.isServing(h.podUid)) serving.add(h.podUid);
    return serving;
  }

  /** One timer, for the earliest deleting pod whose grace ends: no scan of deleting pods. */
  private armDeadline(): void {
    const next = this.planner.nextDeadline;
    if (next === undefined || this.stopping) return;
    if (this.deadlineTimer !== undefined && this.deadlineTimer.at <= next) return;
    this.deadlineTimer?.handle.cancel();
    const handle = this.clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      this.scheduleRun();
    }, Math.max(0, next - this.clock.now()));
    this.deadlineTimer = { at: next, handle };
  }

  private onTransition(t: Transition, rec: PodRecord): void {
    const ips = rec.ips;
    if (t.from === 'new' && t.to === 'serving') return; // the first plan of a serving pod: nothing to say
    this.log.info({ pod: t.key, ips, from: t.from, to: t.to, reason: t.reason }, `pod ${t.to}`);
    const pod = eventPodOf(rec);
    if (t.to === 'draining' && (t.wasReady || t.reason === 'deleting')) {
      const blind = this.flowVisibility?.visible === false ? `; open flows cannot be seen on this node, so an adaptive drain lasts its maximum: ${this.flowVisibility.reason}` : '';
      this.events.drainStarted(pod, `${t.reason === 'deleting' ? 'pod deleting' : 'pod not Ready'}: every node holds its IPVS real servers (${ips.join(', ')}) at weight 0${blind}`);
    } else if (t.from === 'draining' && t.to === 'serving') {
      this.events.drainFinished(pod, 'ready-again', 'the pod is Ready again; holds released');
    } else if (t.to === 'gone') {
      this.sessions.podGone(t.uid, this.cache.get(t.uid));
      this.events.drainFinished(pod, 'pod-gone', `the pod is gone (${t.reason})`);
    }
  }

  private onFlushed(uid: string, report: FlushReport): void {
    const rec = this.planner.record(uid);
    this.planner.markFlushed(uid, this.clock.now());
    if (rec !== undefined) {
      const flushedIps = rec.ips.filter((ip) => report.addresses.includes(ip));
      this.events.conntrackFlushed(eventPodOf(rec), `deleted the conntrack entries of ${flushedIps.join(', ') || 'no IP (all reused)'} on ${this.deps.config.nodeName} (${report.result.deleted} entries in one pass for ${report.pods.length} pod(s))`);
    }
    void this.saveState();
  }

  private async refreshIpvsIndex(): Promise<void> {
    if (!this.ipvsOn || this.stopping || this.yielded) return;
    try {
      await this.hold.refreshIndex();
    } catch (error) {
      if (error instanceof NetlinkError && error.code === 'EIPVSUNAVAILABLE') this.disableIpvs();
      else this.log.warn({ err: error }, 'IPVS index refresh failed');
    }
  }

  private async pollStats(): Promise<void> {
    try {
      this.metrics.observeConntrackStats(await this.deps.netlink.conntrackStats());
      if (this.indexed !== undefined) this.metrics.observeIndexStats(this.indexed.stats());
    } catch (error) {
      this.log.warn({ err: error }, 'conntrack stats read failed');
    }
  }
}
