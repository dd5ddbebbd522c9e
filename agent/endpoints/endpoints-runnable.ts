/**
 * The endpoints runnable: the rest of the cluster, as kube-proxy sees it. It list/watches
 * EndpointSlices (kube-proxy's label selector, evaluated by the API server) and the opted-in
 * Namespaces, merges endpoints per pod (EndpointIndex), and plans their drain states
 * (EndpointPlanner) for the opted-in namespaces' Services not labelled `conndrain.io/hold=disabled`
 * (the others are read for their addresses: a live pod's are never flushed). It
 * publishes `changed` (the endpoints to hold changed: the plan loop runs) and `flushes` (gone
 * endpoints: the conntrack runnable deletes their entries). No node watches every Pod.
 *
 * Decisions by time (an endpoint absent past the debounce, one terminating too long) are taken
 * only on a fresh view: the slice watch is live and read something within `freshMs`, or it is
 * listed again first. A busy cluster's watch is always fresh; a quiet one's list is small.
 */
import type { Logger } from 'pino';
import { ENDPOINT_SLICE_SELECTOR, NAMESPACE_INJECT_SELECTOR } from '../../src/contract.js';
import { EndpointIndex, type MergedEndpoint } from '../../src/endpoints/endpoint-index.js';
import { viewSlice, type RawSlice } from '../../src/endpoints/slice-view.js';
import type { PodRecord } from '../../src/drain-plan.js';
import { TokenBucket } from '../../src/rate/token-bucket.js';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import { RestartingListWatch } from '../../kube/list-watch.js';
import { KubeRequestError, kubeRequest } from '../../kube/request.js';
import type { DrainingPod } from '../ipvs/ipvs-hold.js';
import type { Runnable } from '../runnable.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { Topic } from '../topic.js';
import { EndpointPlanner, type EndpointFlush, type EndpointPlannerOptions } from './endpoint-planner.js';

export const ENDPOINT_SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
export const NAMESPACES_PATH = '/api/v1/namespaces';
/**
 * GETs of pods that left every slice while serving, per node: 5 at once, then one every 2 s.
 * Cluster-wide that is at most 5 x nodes cache reads when a large Service is deleted (25,000 at
 * 5,000 nodes, where one GET per endpoint would be 5,000 per endpoint), 2,500 a second after.
 */
export const GONE_CHECKS = { burst: 5, perSecond: 0.5 } as const;

export interface EndpointsOptions {
  kube: KubeConnection;
  /**
   * This node. An endpoint of it reaches the gone check only when its pod watch does not know
   * the pod (not managed, or created and deleted in a gap of that watch: a pod it knows it
   * flushes fully itself); its check spends no token, so it is never left at UDP/SCTP for want
   * of one. Only the pod's own node asks so: one GET per pod cluster-wide.
   */
  nodeName?: string;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  relistBackoffMaxMs: number;
  /** An endpoint absent from every slice this long is gone (the controller moves endpoints between slices). */
  debounceMs: number;
  /** An endpoint terminating this long is gone (its node is dead). */
  terminatingMaxMs: number;
  /** A decision by time needs the slice watch to have read something this recently (else it lists again). */
  freshMs: number;
  /** A pod of this node the pod watch knows or just lost: its flush is the pod watch's. */
  isLocalPod: EndpointPlannerOptions['isLocalPod'];
  /** Each raw slice as it arrives or goes (the janitor's ownership index). */
  sliceUpserted?: (slice: RawSlice) => void;
  sliceRemoved?: (key: string) => void;
}

interface NamespaceLike {
  metadata?: { name?: string };
}

export class EndpointsRunnable implements Runnable {
  readonly name = 'endpoints';
  readonly index: EndpointIndex;
  readonly planner: EndpointPlanner;
  /** The endpoints to hold changed. */
  readonly changed = new Topic<void>();
  /** Gone endpoints to flush on this node. */
  readonly flushes = new Topic<EndpointFlush>();
  /** Slices and namespaces are both listed (published once). */
  readonly listed = new Topic<void>();
  /** The slices were listed again after a watch gap (endpoints that came and went meanwhile were never seen). */
  readonly relisted = new Topic<void>();
  private readonly optedIn = new Set<string>();
  private readonly slices: RestartingListWatch<RawSlice>;
  private readonly namespaces: RestartingListWatch<NamespaceLike>;
  private deadlineTimer: { at: number; handle: TimerHandle } | undefined;
  /** The decision after a resync (or its retry when the resync failed). */
  private afterResync: TimerHandle | undefined;
  private freshening = false;
  private stopped = false;
  private readonly goneChecks = new TokenBucket(GONE_CHECKS);
  private announced = false;
  /** What the endpoint gauges were last set to. */
  private readonly gauged = { tracked: -1, draining: -1 };

  constructor(private readonly options: EndpointsOptions) {
    const { kube, clock, logger: log, metrics } = options;
    this.index = new EndpointIndex((ns) => this.optedIn.has(ns));
    this.planner = new EndpointPlanner({ debounceMs: options.debounceMs, terminatingMaxMs: options.terminatingMaxMs, isLocalPod: options.isLocalPod });
    const restarting = (what: string) => (error: unknown, delayMs: number): void => {
      metrics.watchRestarts.inc();
      log.warn({ err: error, retryInMs: delayMs }, `${what} watch failed; restarting after backoff`);
    };
    // No field mask for slices (pods have one): a slice is mostly the endpoints read here, and the
    // byte mask scans at about half the speed of JSON.parse, so masking cost more than it saved
    // (docs/scale.md). What viewSlice does not keep dies young.
    // The first state is a list from the watch cache, gzipped (APIResponseCompression), never a
    // streaming list (--watch-list is the pod watch's): released API servers do not compress a
    // watch, and the cluster's slices are ~7 times fewer bytes gzipped (bench/slice-bytes), the
    // bytes a kube-proxy receives for them. List and watch ask for protobuf, as kube-proxy does:
    // half the bytes of JSON per event, and a listed slice's endpoints come with the digests its
    // first watch event is compared with (else that event decodes all of its endpoints).
    this.slices = new RestartingListWatch<RawSlice>(
      {
        connection: kube, path: ENDPOINT_SLICES_PATH, labelSelector: ENDPOINT_SLICE_SELECTOR, pageSize: 500, protobuf: true,
        project: (raw) => raw as RawSlice, keyOf: (s) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`,
        clock, backoffMaxMs: options.relistBackoffMaxMs, watchList: 'off',
      },
      {
        upsert: (slice) => this.upsertSlice(slice),
        remove: (key) => this.removeSlice(key),
        keys: () => this.index.sliceKeys(),
        synced: () => this.maybeListed(),
        restarting: restarting('EndpointSlice'),
        relisting: (delayMs) => log.info({ retryInMs: delayMs }, 'EndpointSlice watch: resourceVersion too old (410 Gone); relisting'),
        relisted: () => this.relisted.publish(),
      },
    );
    this.namespaces = new RestartingListWatch<NamespaceLike>(
      {
        connection: kube, path: NAMESPACES_PATH, labelSelector: NAMESPACE_INJECT_SELECTOR, pageSize: 500,
        project: (raw) => ({ metadata: { name: (raw as NamespaceLike).metadata?.name ?? '' } }), fields: { metadata: { name: true, resourceVersion: true } },
        keyOf: (ns) => ns.metadata?.name ?? '', clock, backoffMaxMs: options.relistBackoffMaxMs, watchList: 'off',
      },
      {
        upsert: (ns) => this.setOptIn(ns.metadata?.name ?? '', true),
        remove: (name) => this.setOptIn(name, false),
        keys: () => this.optedIn,
        synced: () => this.maybeListed(),
        restarting: restarting('Namespace'),
      },
    );
  }

  /** Both the slices and the opted-in namespaces are listed. */
  get isSynced(): boolean {
    return this.slices.synced && this.namespaces.synced;
  }

  start(): Promise<void> {
    this.namespaces.start();
    this.slices.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.deadlineTimer?.handle.cancel();
    this.afterResync?.cancel();
    await Promise.all([this.slices.stop(), this.namespaces.stop()]);
  }

  /** Endpoints to hold at weight 0. */
  draining(): DrainingPod[] {
    return this.planner.drainingPods();
  }

  takeHoldingChanged(): boolean {
    return this.planner.takeHoldingChanged();
  }

  /** Listed and not draining: a held server of it is released as Ready again. */
  isServing(uid: string): boolean {
    return this.planner.isServing(uid, this.index.isListed(uid));
  }

  /** Endpoints whose Service turned flow pinning off (label conndrain.io/flow-pinning=off). */
  flowPinningOptOuts(uids: Iterable<string>): Set<string> {
    const out = new Set<string>();
    for (const uid of uids) if (this.index.merged(uid)?.flowPinningOff === true) out.add(uid);
    return out;
  }

  snapshot(): PodRecord[] {
    return this.planner.snapshot();
  }

  resume(records: readonly PodRecord[]): void {
    this.planner.resume(records);
  }

  private upsertSlice(raw: RawSlice): void {
    // From the protobuf watch, endpoints byte-identical to the kept ones are not decoded.
    const view = viewSlice(raw, (key) => this.index.keptEndpoints(key));
    const read = this.options.metrics.endpointsRead;
    if (view.keptCount > 0) read.inc({ how: 'kept' }, view.keptCount);
    if (view.size > view.keptCount) read.inc({ how: 'decoded' }, view.size - view.keptCount);
    this.options.sliceUpserted?.(raw);
    if (!this.announced) {
      // The first list: maybeListed plans every endpoint once when it is in, so nothing is compared per slice.
      this.index.upsert(view);
      return;
    }
    const changed = this.index.changedBy(view);
    const before = this.mergedOf(changed);
    // Its Service just opted out (label conndrain.io/hold=disabled): its endpoints are let go,
    // not taken as gone (they serve on; a flush would cut live connections).
    const optingOut = view.holdDisabled && this.index.holdDisabledOf(view.key) === false;
    this.index.upsert(view);
    this.apply(changed, before, optingOut);
  }

  private removeSlice(key: string): void {
    this.options.sliceRemoved?.(key);
    if (!this.announced) {
      this.index.remove(key);
      return;
    }
    const uids = this.index.uidsOfSlice(key);
    const before = this.mergedOf(uids);
    const touched = this.index.remove(key);
    this.apply(touched, before);
  }

  private mergedOf(uids: Iterable<string>): Map<string, MergedEndpoint | undefined> {
    const out = new Map<string, MergedEndpoint | undefined>();
    for (const uid of uids) if (!out.has(uid)) out.set(uid, this.index.merged(uid));
    return out;
  }

  private apply(touched: Iterable<string>, before: ReadonlyMap<string, MergedEndpoint | undefined>, optedOut = false): void {
    // Until the slices and the opted-in namespaces are listed (every slice looks opted out before
    // the namespaces are), the index learns and the plan waits: maybeListed plans every endpoint
    // once, and a resumed hold is not released on a partial view.
    if (!this.announced) return;
    const now = this.options.clock.now();
    for (const uid of touched) this.planner.changed(uid, before.get(uid), this.index.merged(uid), now, optedOut);
    this.afterChange();
  }

  private setOptIn(namespace: string, on: boolean): void {
    if (namespace === '' || this.optedIn.has(namespace) === on) return;
    const uids = this.index.uidsOfNamespace(namespace);
    const before = this.mergedOf(uids);
    if (on) this.optedIn.add(namespace);
    else this.optedIn.delete(namespace);
    this.options.logger.info({ namespace, optedIn: on, endpoints: uids.size }, on ? 'namespace opted in: its Services\' endpoints are held and flushed' : 'namespace opted out: its endpoints are no longer held or flushed');
    this.apply(uids, before, !on);
  }

  private maybeListed(): void {
    if (!this.isSynced || this.announced) return;
    this.announced = true;
    const now = this.options.clock.now();
    for (const uid of this.index.uids()) {
      // Most endpoints serve and have no record: nothing to plan, and no merged view built for them.
      if (!this.planner.has(uid) && !this.index.isDraining(uid)) continue;
      const merged = this.index.merged(uid);
      this.planner.changed(uid, undefined, merged, now, merged === undefined);
    }
    this.planner.settleResumed((uid) => this.index.merged(uid)?.draining === true, (uid) => this.index.has(uid), now);
    this.options.logger.info({ slices: this.index.sliceCount, endpoints: this.index.endpointCount, namespaces: this.optedIn.size }, 'endpoints: EndpointSlices and opted-in namespaces listed');
    this.listed.publish();
    this.afterChange();
  }

  private afterChange(): void {
    const { metrics } = this.options;
    // Set when they change only: this runs for every watch event, and a set hashes its labels.
    if (this.index.endpointCount !== this.gauged.tracked) metrics.endpointsTracked.set((this.gauged.tracked = this.index.endpointCount));
    if (this.planner.draining !== this.gauged.draining) metrics.endpointsDraining.set((this.gauged.draining = this.planner.draining));
    this.armDeadline();
    this.changed.publish();
  }

  /** One timer for the earliest decision by time. */
  private armDeadline(): void {
    const next = this.planner.nextDeadline;
    if (next === undefined || this.stopped) return;
    if (this.deadlineTimer !== undefined && this.deadlineTimer.at <= next) return;
    this.deadlineTimer?.handle.cancel();
    const { clock } = this.options;
    const handle = clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      this.decideDue();
    }, Math.max(0, next - clock.now()));
    this.deadlineTimer = { at: next, handle };
  }

  /** Takes the decisions by time that are due, on a fresh view (listing again first when the watch may be stale). */
  private decideDue(): void {
    const { clock, freshMs, metrics, logger } = this.options;
    if (this.stopped || !this.isSynced) return;
    const now = clock.now();
    if (!this.planner.isDue(now)) {
      this.armDeadline();
      return;
    }
    if (!this.slices.live || this.slices.progressAgeMs() > freshMs) {
      if (this.freshening) return;
      this.freshening = true;
      metrics.staleViewDeferrals.inc({ source: 'endpointslices' });
      void this.slices.resync().then((applied) => {
        this.freshening = false;
        if (this.stopped) return;
        if (!applied) logger.info('endpoints: a decision by time is due but the EndpointSlices could not be listed again; it waits');
        this.afterResync?.cancel();
        this.afterResync = clock.setTimeout(() => {
          this.afterResync = undefined;
          if (applied) this.decide(clock.now());
          else this.decideDue();
        }, applied ? 0 : 1000);
      });
      return;
    }
    this.decide(now);
  }

  private decide(now: number): void {
    if (this.stopped) return;
    const flushes = this.planner.takeDue(now);
    for (const f of flushes) {
      if (f.scope !== 'udp-sctp') this.publishFlush(f);
      else if (!this.isOwnNode(f) && !this.goneChecks.take(now)) {
        this.options.metrics.endpointGoneChecks.inc({ outcome: 'over-budget' });
        this.publishFlush(f);
      } else void this.confirmGone(f).then((gone) => this.publishFlush(gone ? { ...f, scope: 'all', why: 'left-after-draining' } : f));
    }
    this.afterChange();
  }

  /** The endpoint is this node's (see `EndpointsOptions.nodeName`). */
  private isOwnNode(f: EndpointFlush): boolean {
    return this.options.nodeName !== undefined && f.nodeName === this.options.nodeName;
  }

  /**
   * An endpoint that left its slices while serving (its Service deleted, a label changed, or a
   * terminating state this agent missed in a watch gap): one GET of its pod tells. Gone (404, or
   * another pod under that name, or terminal) is proof it died: every protocol. Any doubt keeps
   * UDP/SCTP only. Every node asks the same question at the same moment, so the GET is read from
   * the API server's watch cache (`resourceVersion=0`; a cache behind can only say "still there",
   * the safe answer) and spends a token of `goneChecks`: a Service of 1,000 endpoints deleted
   * asks GONE_CHECKS.burst GETs per node, not 1,000 (the rest flush UDP/SCTP only, counted),
   * plus one for each of the node's own pods its pod watch does not know (one GET per pod
   * cluster-wide: only its own node asks).
   */
  private async confirmGone(f: EndpointFlush): Promise<boolean> {
    const { metrics } = this.options;
    const at = f.key.indexOf('/');
    if (at < 0 || f.uid.includes('/')) return false;
    let gone: boolean;
    try {
      const pod = (await kubeRequest(this.options.kube, 'GET', `/api/v1/namespaces/${encodeURIComponent(f.key.slice(0, at))}/pods/${encodeURIComponent(f.key.slice(at + 1))}`, { resourceVersion: '0' })) as { metadata?: { uid?: string }; status?: { phase?: string } } | undefined;
      gone = pod?.metadata?.uid !== f.uid || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    } catch (error) {
      gone = error instanceof KubeRequestError && error.statusCode === 404;
      if (!gone) {
        metrics.endpointGoneChecks.inc({ outcome: 'error' });
        return false;
      }
    }
    metrics.endpointGoneChecks.inc({ outcome: gone ? 'gone' : 'alive' });
    return gone;
  }

  private publishFlush(f: EndpointFlush): void {
    if (this.stopped) return;
    this.options.metrics.endpointFlushes.inc({ scope: f.scope });
    // Every node flushes every gone endpoint: the outcome is logged at info only where entries were deleted (target-flush).
    this.options.logger.debug({ pod: f.key, why: f.why, scope: f.scope, targets: f.targets.length }, 'endpoint gone from every EndpointSlice: flushing its conntrack entries on this node');
    this.flushes.publish(f);
  }
}
