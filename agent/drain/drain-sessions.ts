/**
 * Adaptive drains, one per drain id (hook kind `agent`). A drain never ends before
 * `min-drain`; after it, it ends as soon as this node's conntrack shows no open flow to the
 * pod's IPs (checked every `pollIntervalMs`), and at the latest at `drain`. It also ends when
 * the pod leaves the API. Retries of the same id join the running drain (or get the finished
 * drain's summary at once); waiters that go away end nothing but their own wait.
 *
 * A call for a drain id whose pod left the API shortly before (kept in a bounded memory of
 * recently gone ids, `GONE_MEMORY_SIZE` entries for `keepGoneMs`) is answered `pod-gone` at
 * once, never "unknown". Where this node cannot see the pod's flows (`flowVisibility` none:
 * an eBPF datapath that bypasses conntrack), a drain lasts its maximum and its summary says why.
 *
 * A session another agent instance started (state file, handover) is resumed with its own
 * start time and deadlines and posts no second DrainStarted.
 */
import type { Logger } from 'pino';
import { DEFAULT_ANNOTATION_LIMITS, type DrainSettings } from '../../src/annotations.js';
import { DEFAULT_MIN_DRAIN_SECONDS } from '../../src/contract.js';
import type { ConntrackApi } from 'netlink-native/types';
import type { Clock, TimerHandle } from '../../time/clock.js';
import { countOpenFlows, type FlowTimeouts } from './flows.js';
import type { FlowVisibility } from '../../src/flow-visibility.js';
import { eventPodOf } from '../pods/index.js';
import type { CachedPod } from '../pods/pod-cache.js';
import type { SessionRecord } from '../runtime/state-file.js';

export type DrainEnd = 'idle' | 'timeout' | 'pod-gone';

export interface DrainSummary {
  drainId: string;
  pod: string;
  ips: string[];
  ended: DrainEnd;
  elapsedMs: number;
  minDrainMs: number;
  drainMs: number;
  /** Open flows at the last check (null when no check ran or it failed, or flows cannot be seen). */
  openFlows: number | null;
  checks: number;
  /** Present when this node cannot see the pod's flows: why the drain lasted its maximum. */
  flowsUnknown?: string;
}

/** Recently gone drain ids remembered at most (oldest forgotten first). */
export const GONE_MEMORY_SIZE = 4096;

export interface DrainSessionsOptions {
  clock: Clock;
  conntrack: ConntrackApi;
  flowIdleMs: number;
  pollIntervalMs: number;
  timeouts: FlowTimeouts;
  logger: Logger;
  /** How long a finished drain's summary is kept for late retries. */
  keepFinishedMs?: number;
  /** How long the drain id of a pod that left the API is answered `pod-gone` (default 10 min). */
  keepGoneMs?: number;
  /** Whether open flows can be seen on this node (default: conntrack sees them); read when a drain starts. */
  flowVisibility?(): FlowVisibility;
  onStart?(pod: SessionPod, settings: Pick<DrainSettings, 'drainMs' | 'minDrainMs'>, visibility: FlowVisibility | undefined): void;
  onFinish?(pod: SessionPod, summary: DrainSummary): void;
  /** The set of open sessions changed (state file, handover peers). */
  onChange?(): void;
}

/** What a session knows of its pod (from the cache, or from a session record). */
export interface SessionPod {
  uid: string;
  key: string;
  namespace: string;
  name: string;
  nodeName: string | undefined;
  ips: string[];
}

export function sessionPodOf(pod: CachedPod): SessionPod {
  return { uid: pod.view.uid, key: pod.view.key, namespace: pod.namespace, name: pod.name, nodeName: pod.view.nodeName, ips: [...pod.view.ips] };
}

/** A session's pod from its record (a resumed session: its pod may be gone from the cache). */
export function sessionPodOfRecord(rec: SessionRecord): SessionPod {
  return { ...eventPodOf(rec), key: rec.key, ips: [...rec.ips] };
}

/** The settings of a pod's drain; defaults (and a warning) when its annotations do not parse. */
export function drainSettingsOf(pod: CachedPod, logger: Logger): Pick<DrainSettings, 'drainMs' | 'minDrainMs'> {
  if (pod.drain.kind === 'on') return pod.drain.settings;
  const drainMs = DEFAULT_ANNOTATION_LIMITS.defaultDrainMs;
  logger.warn({ pod: pod.view.key, ips: pod.view.ips, annotations: pod.drain.kind === 'invalid' ? pod.drain.problems.map((p) => p.message) : 'off' }, 'drain annotations missing or invalid: using the defaults');
  return { drainMs, minDrainMs: Math.min(DEFAULT_MIN_DRAIN_SECONDS * 1000, drainMs) };
}

class DrainSession {
  summary: DrainSummary | undefined;
  readonly done: Promise<DrainSummary>;
  private resolve!: (s: DrainSummary) => void;
  private timers: TimerHandle[] = [];
  private openFlows: number | null = null;
  private checks = 0;
  private checking = false;
  private stopped = false;
  /** Whether this node sees the pod's flows, as known when the drain started. */
  readonly visibility: FlowVisibility | undefined;

  constructor(
    readonly drainId: string,
    readonly pod: SessionPod,
    readonly settings: Pick<DrainSettings, 'drainMs' | 'minDrainMs'>,
    readonly startedMs: number,
    private readonly options: DrainSessionsOptions,
    private readonly log: Logger,
    private readonly ended: (session: DrainSession) => void,
  ) {
    this.visibility = options.flowVisibility?.();
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  start(): void {
    const { clock } = this.options;
    // Relative to the start: a resumed session keeps the deadlines of the agent that began it.
    const since = clock.now() - this.startedMs;
    this.timers.push(clock.setTimeout(() => this.finish('timeout'), Math.max(0, this.settings.drainMs - since)));
    // Flows invisible here: no check could prove the pod idle; the drain lasts its maximum.
    if (this.visibility?.visible !== false) this.timers.push(clock.setTimeout(() => this.check(), Math.max(0, this.settings.minDrainMs - since)));
  }

  private check(): void {
    if (this.summary !== undefined || this.checking) return;
    this.checking = true;
    const { conntrack, flowIdleMs, timeouts, clock, pollIntervalMs } = this.options;
    countOpenFlows(conntrack, this.pod.ips, flowIdleMs, timeouts)
      .then((count) => {
        this.checks += 1;
        this.openFlows = count.open;
        if (count.open === 0) {
          this.finish('idle');
          return;
        }
        this.log.debug({ openFlows: count.open, byProtocol: count.byProtocol }, 'drain: flows still open');
      })
      .catch((error: unknown) => {
        this.checks += 1;
        this.openFlows = null;
        this.log.warn({ err: error }, 'drain: conntrack check failed; waiting for the next check or the drain deadline');
      })
      .finally(() => {
        this.checking = false;
        if (this.summary === undefined && !this.stopped) this.timers.push(clock.setTimeout(() => this.check(), pollIntervalMs));
      });
  }

  stop(): void {
    for (const t of this.timers) t.cancel();
    this.timers = [];
    this.stopped = true;
  }

  finish(how: DrainEnd): void {
    if (this.stopped) return;
    if (this.summary !== undefined) return;
    for (const t of this.timers) t.cancel();
    this.timers = [];
    this.summary = {
      drainId: this.drainId,
      pod: this.pod.key,
      ips: this.pod.ips,
      ended: how,
      elapsedMs: this.options.clock.now() - this.startedMs,
      minDrainMs: this.settings.minDrainMs,
      drainMs: this.settings.drainMs,
      openFlows: this.openFlows,
      checks: this.checks,
      ...flowsUnknownOf(this.visibility),
    };
    this.log.info({ ended: how, elapsedMs: this.summary.elapsedMs, openFlows: this.openFlows, flowsUnknown: this.summary.flowsUnknown }, 'drain finished');
    this.resolve(this.summary);
    this.ended(this);
  }
}

function flowsUnknownOf(visibility: FlowVisibility | undefined): { flowsUnknown?: string } {
  return visibility === undefined || visibility.visible ? {} : { flowsUnknown: visibility.reason };
}

/** What is kept of a pod that left the API, to answer a late call for its drain id. */
interface GoneDrain {
  uid: string;
  summary: DrainSummary;
  goneAtMs: number;
}

export type JoinResult = { kind: 'unknown' } | { kind: 'drain'; done: Promise<DrainSummary>; joined: boolean };

export class DrainSessions {
  private readonly sessions = new Map<string, DrainSession>();
  /** Drain ids whose DrainInterrupted Event is due and not recorded yet (kept in the state file until it is). */
  private readonly interruptedUnposted = new Set<string>();
  /** Ended drains' records kept only for their unposted DrainInterrupted. */
  private readonly endedUnposted = new Map<string, SessionRecord>();
  private readonly forget = new Map<string, TimerHandle>();
  /** Drain ids of pods that left the API, oldest first. */
  private readonly gone = new Map<string, GoneDrain>();

  constructor(
    private readonly options: DrainSessionsOptions,
    private readonly lookup: (drainId: string) => CachedPod | undefined,
    /** A session another instance holds or held (joined as a resumed session, not a new one). */
    private readonly resumable: (drainId: string) => SessionRecord | undefined = () => undefined,
  ) {}

  /** Drains not yet finished. */
  get active(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.summary === undefined) n += 1;
    return n;
  }

  /** A session for `drainId` exists here (running, or finished and kept for late retries). */
  has(drainId: string): boolean {
    return this.sessions.has(drainId);
  }

  /** Starts the drain of `drainId`, or joins the one already running (or finished). */
  join(drainId: string): JoinResult {
    const existing = this.sessions.get(drainId);
    if (existing !== undefined) return { kind: 'drain', done: existing.done, joined: true };
    const record = this.resumable(drainId);
    if (record !== undefined) return { kind: 'drain', done: this.resume(record).done, joined: true };
    const cached = this.lookup(drainId);
    // Gone from the API, or still listed but past its grace (the plan called it gone).
    const gone = this.recentlyGone(drainId);
    if (gone !== undefined && (cached === undefined || cached.view.uid === gone.uid)) {
      this.options.logger.info({ drainId, pod: gone.summary.pod, ips: gone.summary.ips }, 'drain call for a pod already gone: pod-gone');
      return { kind: 'drain', done: Promise.resolve(gone.summary), joined: false };
    }
    if (cached === undefined) return { kind: 'unknown' };
    const pod = sessionPodOf(cached);
    const log = this.options.logger.child({ pod: pod.key, ips: pod.ips, drainId });
    const settings = drainSettingsOf(cached, log);
    const session = new DrainSession(drainId, pod, settings, this.options.clock.now(), this.options, log, (s) => this.onEnded(s));
    this.sessions.set(drainId, session);
    log.info({ minDrainMs: settings.minDrainMs, drainMs: settings.drainMs, ...flowsUnknownOf(session.visibility) }, session.visibility?.visible === false ? 'drain started; open flows cannot be seen on this node: it lasts its maximum' : 'drain started');
    this.options.onStart?.(pod, settings, session.visibility);
    session.start();
    this.options.onChange?.();
    return { kind: 'drain', done: session.done, joined: false };
  }

  /**
   * Continues a session another instance began (its start time and deadlines; no DrainStarted).
   * A session already known here is returned as it is.
   */
  resume(record: SessionRecord): { done: Promise<DrainSummary> } {
    const existing = this.sessions.get(record.drainId);
    if (existing !== undefined) return existing;
    const pod = sessionPodOfRecord(record);
    const log = this.options.logger.child({ pod: pod.key, ips: pod.ips, drainId: record.drainId });
    const settings = { minDrainMs: record.minDrainMs, drainMs: record.drainMs };
    const session = new DrainSession(record.drainId, pod, settings, record.startedAtMs, this.options, log, (s) => this.onEnded(s));
    this.sessions.set(record.drainId, session);
    log.info({ startedAtMs: record.startedAtMs, minDrainMs: settings.minDrainMs, drainMs: settings.drainMs, from: record.holder }, 'drain resumed (begun by another agent instance)');
    session.start();
    this.options.onChange?.();
    return session;
  }

  /**
   * The sessions not finished yet, as the state file keeps them, and those finished whose
   * DrainInterrupted Event the API has not taken yet (`ended`: kept only to post it; a resumed
   * session of a pod already gone ends at once, and its Event must outlive it).
   */
  openRecords(holder: string, handedOver: boolean): SessionRecord[] {
    const out: SessionRecord[] = [];
    for (const s of this.sessions.values()) {
      const unposted = this.interruptedUnposted.has(s.drainId);
      if (s.summary !== undefined && !unposted) continue;
      out.push({
        drainId: s.drainId, uid: s.pod.uid, key: s.pod.key, nodeName: s.pod.nodeName, ips: s.pod.ips, startedAtMs: s.startedMs, minDrainMs: s.settings.minDrainMs, drainMs: s.settings.drainMs, startedPosted: true, holder, handedOver,
        ...(unposted ? { interruptedUnposted: true as const } : {}),
        ...(s.summary !== undefined ? { ended: true as const } : {}),
      });
    }
    for (const r of this.endedUnposted.values()) {
      if (!this.sessions.has(r.drainId)) out.push({ ...r, holder, handedOver, interruptedUnposted: true, ended: true });
    }
    return out;
  }

  /** A record of an ended drain kept only for its unposted DrainInterrupted (see `openRecords`). */
  keepEndedUnposted(record: SessionRecord): void {
    this.endedUnposted.set(record.drainId, record);
    this.interruptedUnposted.add(record.drainId);
    this.options.onChange?.();
  }

  /** A DrainInterrupted Event for `drainId` is being posted: the state file says so until it is recorded. */
  markInterruptedUnposted(drainId: string): void {
    this.interruptedUnposted.add(drainId);
  }

  /** The DrainInterrupted Event of `drainId` is recorded. */
  interruptedRecorded(drainId: string): void {
    this.endedUnposted.delete(drainId);
    if (this.interruptedUnposted.delete(drainId)) this.options.onChange?.();
  }

  /**
   * The pod left the API: its running drain ends now (`pod-gone`), and a later call for its
   * drain id (given `pod`) is answered `pod-gone` for `keepGoneMs`.
   */
  podGone(uid: string, pod?: CachedPod): void {
    for (const s of this.sessions.values()) if (s.pod.uid === uid) s.finish('pod-gone');
    const drainId = pod?.view.drainId;
    if (pod === undefined || drainId === undefined || this.sessions.has(drainId)) return;
    const settings = pod.drain.kind === 'on' ? pod.drain.settings : { drainMs: DEFAULT_ANNOTATION_LIMITS.defaultDrainMs, minDrainMs: Math.min(DEFAULT_MIN_DRAIN_SECONDS * 1000, DEFAULT_ANNOTATION_LIMITS.defaultDrainMs) };
    this.gone.delete(drainId);
    this.gone.set(drainId, {
      uid,
      goneAtMs: this.options.clock.now(),
      summary: { drainId, pod: pod.view.key, ips: pod.view.ips, ended: 'pod-gone', elapsedMs: 0, minDrainMs: settings.minDrainMs, drainMs: settings.drainMs, openFlows: null, checks: 0 },
    });
    while (this.gone.size > GONE_MEMORY_SIZE) {
      const oldest = this.gone.keys().next();
      if (oldest.done === true) break;
      this.gone.delete(oldest.value);
    }
  }

  /** What is kept of a drain id whose pod left the API within `keepGoneMs`. */
  private recentlyGone(drainId: string): GoneDrain | undefined {
    const gone = this.gone.get(drainId);
    if (gone === undefined) return undefined;
    if (this.options.clock.now() - gone.goneAtMs > (this.options.keepGoneMs ?? 10 * 60_000)) {
      this.gone.delete(drainId);
      return undefined;
    }
    return gone;
  }

  /**
   * Shutdown: stops every timer and answers nobody (the HTTP server drops the connections;
   * a drain must not look finished because the agent is restarting).
   */
  close(): void {
    for (const s of this.sessions.values()) s.stop();
    for (const t of this.forget.values()) t.cancel();
    this.forget.clear();
  }

  private onEnded(session: DrainSession): void {
    if (session.summary !== undefined) this.options.onFinish?.(session.pod, session.summary);
    this.options.onChange?.();
    const keep = this.options.keepFinishedMs ?? 10 * 60_000;
    this.forget.set(session.drainId, this.options.clock.setTimeout(() => {
      this.forget.delete(session.drainId);
      if (this.sessions.get(session.drainId) === session) this.sessions.delete(session.drainId);
    }, keep));
  }
}
