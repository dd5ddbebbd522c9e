/**
 * The drain runnable: the drain API the preStop hooks call (127.0.0.1:9901/v1/drain/<id>), the
 * adaptive drain sessions behind it (min-drain, open flows, max drain), and the drain story
 * told to app teams as Events. It reacts to the plan's transitions (DrainStarted,
 * DrainFinished, a gone pod ends its session) and to pods leaving the API.
 */
import type { Logger } from 'pino';
import type { ConntrackApi } from 'netlink-native/types';
import type { Clock } from '../../time/clock.js';
import type { AgentConfig } from '../../src/config/agent.js';
import type { FlowVisibility } from '../../src/flow-visibility.js';
import type { PlannedTransition } from '../plan/drain-planner.js';
import { eventPodOf, type PodEvents } from '../pods/index.js';
import type { CachedPod, PodCache } from '../pods/pod-cache.js';
import type { SyncGate } from '../pods/sync-gate.js';
import type { Runnable } from '../runnable.js';
import type { ForeignSessions } from '../handover/foreign-sessions.js';
import type { HandedSessions } from '../handover/handover.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import type { SessionRecord } from '../runtime/state-file.js';
import { Topic } from '../topic.js';
import { DrainApi } from './drain-api.js';
import { DrainSessions, sessionPodOfRecord } from './drain-sessions.js';
import { readFlowTimeouts } from './flow-timeouts.js';
import { probeFlowVisibility, type DatapathProbeOptions } from './flow-visibility-probe.js';
import type { FlowTimeouts } from './flows.js';

export interface DrainOptions {
  config: Pick<AgentConfig, 'flowIdleMs' | 'flowPollIntervalMs' | 'maxDrains' | 'unknownIdWaitMs' | 'drainPort' | 'drainAddress' | 'flowVisibility'>;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  events: PodEvents;
  /** Open flows are counted here (the conntrack runnable's event index or dump). */
  conntrack: ConntrackApi;
  cache: PodCache;
  /** Open once the first pod list is in: a call for an unknown id waits for it. */
  synced: SyncGate;
  /** Lists this node's pods again: a call for an id still unknown is judged on a fresh view. */
  refresh?: () => Promise<boolean>;
  /** Sessions a live older instance holds: a call for one continues it here. */
  foreign: ForeignSessions;
  flowTimeouts?: FlowTimeouts;
  datapathProbe?: DatapathProbeOptions;
  listenSocket?: (host: string, port: number) => number;
}

export class DrainRunnable implements Runnable, HandedSessions {
  readonly name = 'drain';
  /** The open sessions changed (state file, handover peers). */
  readonly sessionsChanged = new Topic<void>();
  /** The drain API's port (after start). */
  port = 0;
  /** The drain API listens. */
  listening = false;
  private readonly sessions: DrainSessions;
  private readonly api: DrainApi;
  /** Whether conntrack sees this node's pod traffic (--flow-visibility, probed at start). */
  private visibility: FlowVisibility | undefined;

  constructor(private readonly options: DrainOptions) {
    const { config, clock, logger: log, metrics, events, cache } = options;
    this.sessions = new DrainSessions(
      {
        clock,
        conntrack: options.conntrack,
        flowIdleMs: config.flowIdleMs,
        pollIntervalMs: config.flowPollIntervalMs,
        timeouts: options.flowTimeouts ?? readFlowTimeouts(),
        logger: log,
        flowVisibility: () => this.visibility ?? { visible: true, source: 'probe', signals: [], reason: 'not probed yet' },
        onStart: (pod, settings, visibility) => {
          metrics.drainsActive.set(this.sessions.active);
          const until = visibility?.visible === false ? `lasts its maximum, ${settings.drainMs} ms, because ${visibility.reason}` : `at least ${settings.minDrainMs} ms, at most ${settings.drainMs} ms, until no open flow to ${pod.ips.join(', ')}`;
          events.drainStarted(pod, `drain started by the preStop hook: ${until}`);
        },
        onFinish: (pod, summary) => {
          metrics.drainsActive.set(this.sessions.active);
          metrics.drains.inc({ ended: summary.ended });
          const flows = summary.flowsUnknown === undefined ? `open flows at the last check: ${summary.openFlows ?? 'unknown'}` : `open flows unknown: ${summary.flowsUnknown}`;
          events.drainFinished(pod, summary.ended, `after ${summary.elapsedMs} ms; ${flows}`);
        },
        onChange: () => this.sessionsChanged.publish(),
      },
      (drainId) => cache.byDrain(drainId),
      (drainId) => this.takeForeign(drainId),
    );
    this.api = new DrainApi({ sessions: this.sessions, maxDrains: config.maxDrains, logger: log, synced: options.synced, ...(options.refresh === undefined ? {} : { refresh: options.refresh }), unknownIdWaitMs: config.unknownIdWaitMs, onAnswer: (status) => metrics.drainApiAnswers.inc({ code: String(status) }) });
  }

  /** Drains not finished yet. */
  get active(): number {
    return this.sessions.active;
  }

  /** Drain calls waiting for their answer. */
  get held(): number {
    return this.api.held;
  }

  async start(): Promise<void> {
    const { config } = this.options;
    await this.probeFlowVisibility();
    // Before the first pod list: a call for an id not known yet is held until the list is in.
    this.port = await this.api.listen(config.drainPort, config.drainAddress, this.options.listenSocket);
    this.listening = true;
  }

  /** Handover: no new connections (they go to the other agent on the same port); held calls go on. */
  stopAccepting(): void {
    this.api.stopAccepting();
  }

  /** Resolves when every held call has been answered. */
  idle(): Promise<void> {
    return this.api.idle();
  }

  async stop(): Promise<void> {
    this.sessions.close();
    await this.api.close();
    this.options.synced.cancel();
  }

  has(drainId: string): boolean {
    return this.sessions.has(drainId);
  }

  openRecords(holder: string, handedOver: boolean): SessionRecord[] {
    return this.sessions.openRecords(holder, handedOver);
  }

  /** A session begun by another instance: continued here (DrainFinished once); `interrupted`: a crash cut its call short. */
  resume(rec: SessionRecord, interrupted: boolean): void {
    if (this.sessions.has(rec.drainId)) return;
    const { events, metrics, logger: log } = this.options;
    const pod = sessionPodOfRecord(rec);
    if (rec.ended === true) {
      // The drain ended; only its DrainInterrupted is due (counted by the instance that found it).
      if (rec.interruptedUnposted !== true) return;
      this.sessions.keepEndedUnposted(rec);
      const posted = events.drainInterrupted(pod, interruptedMessage(rec, ''), () => this.sessions.interruptedRecorded(rec.drainId));
      if (!posted) this.sessions.interruptedRecorded(rec.drainId);
      return;
    }
    if (interrupted) {
      metrics.drainsInterrupted.inc();
      log.warn({ pod: rec.key, ips: rec.ips, drainId: rec.drainId, holder: rec.holder, startedAtMs: rec.startedAtMs }, 'drain interrupted: the agent holding its preStop call died; the kubelet saw a reset and went on');
    }
    // Reported by this instance, or by an earlier one whose Event the API never took (it was
    // down, then that instance stopped): the state file keeps it due until it is recorded.
    if (interrupted || rec.interruptedUnposted === true) {
      const who = interrupted ? `(${rec.holder}) ` : '';
      this.sessions.markInterruptedUnposted(rec.drainId);
      const posted = events.drainInterrupted(pod, interruptedMessage(rec, who), () => this.sessions.interruptedRecorded(rec.drainId));
      if (!posted) this.sessions.interruptedRecorded(rec.drainId);
    }
    if (rec.startedPosted) events.drainResumed(pod);
    this.sessions.resume(rec);
  }

  /** A pod left the API: its running drain ends (`pod-gone`) and a late call for its id is answered so. */
  podRemoved(gone: CachedPod): void {
    this.sessions.podGone(gone.view.uid, gone);
  }

  /** A planned transition: logged, told to the app team as an Event; a gone pod's drain ends. */
  onTransition({ transition: t, record: rec }: PlannedTransition): void {
    if (t.from === 'new' && t.to === 'serving') return; // the first plan of a serving pod: nothing to say
    const { logger: log, events, cache } = this.options;
    const ips = rec.ips;
    log.info({ pod: t.key, ips, from: t.from, to: t.to, reason: t.reason }, `pod ${t.to}`);
    const pod = eventPodOf(rec);
    if (t.to === 'draining' && (t.wasReady || t.reason === 'deleting')) {
      const blind = this.visibility?.visible === false ? `; open flows cannot be seen on this node, so an adaptive drain lasts its maximum: ${this.visibility.reason}` : '';
      events.drainStarted(pod, `${t.reason === 'deleting' ? 'pod deleting' : 'pod not Ready'}: every node holds its IPVS real servers (${ips.join(', ')}) at weight 0${blind}`);
    } else if (t.from === 'draining' && t.to === 'serving') {
      events.drainFinished(pod, 'ready-again', 'the pod is Ready again; holds released');
    } else if (t.to === 'gone') {
      this.sessions.podGone(t.uid, cache.get(t.uid));
      events.drainFinished(pod, 'pod-gone', `the pod is gone (${t.reason})`);
    }
  }

  /** A drain call here for a session a live older instance holds: continued here (no second DrainStarted). */
  private takeForeign(drainId: string): SessionRecord | undefined {
    const rec = this.options.foreign.take(drainId);
    if (rec?.startedPosted === true) this.options.events.drainResumed(sessionPodOfRecord(rec));
    return rec;
  }

  /** --flow-visibility: where conntrack cannot see pod traffic, every adaptive drain lasts its maximum. */
  private async probeFlowVisibility(): Promise<void> {
    const { config, datapathProbe, metrics, logger: log } = this.options;
    const visibility = await probeFlowVisibility(config.flowVisibility, datapathProbe);
    this.visibility = visibility;
    metrics.flowsVisible.set(visibility.visible ? 1 : 0);
    if (visibility.visible) log.info({ flowVisibility: visibility.source, signals: visibility.signals }, `flow visibility: ${visibility.reason}`);
    else log.warn({ flowVisibility: visibility.source, signals: visibility.signals }, `flow visibility: open flows unknown; every adaptive drain lasts its maximum: ${visibility.reason}`);
  }
}

/** DrainInterrupted's message; `who`: the instance that held the call, when this one found it cut. */
function interruptedMessage(rec: SessionRecord, who: string): string {
  return `the conndrain agent instance holding this pod's preStop call ${who}stopped without answering it (crash or kill); the kubelet ended the hook early. The drain (IPVS hold, flow count) goes on; started ${new Date(rec.startedAtMs).toISOString()}`;
}
