/**
 * The pods runnable: watches the managed pods into the pod cache and publishes what changed.
 * It decides nothing: the plan, the drain sessions and the conntrack event index subscribe to
 * `changes`, and the drain API waits on `synced` (the first complete list).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import type { WatchListMode } from '../../kube/watch-list.js';
import type { PodView } from '../../src/pod/view.js';
import type { Runnable } from '../runnable.js';
import type { AgentMetrics } from '../runtime/metrics.js';
import { Topic } from '../topic.js';
import { PodCache, type CachedPod } from './pod-cache.js';
import { SyncGate } from './sync-gate.js';
import { PodWatch, podUid } from './watch.js';

/** One pod as the watch saw it change: updated (with its view before, if it was known) or gone from the API. */
export type PodChange =
  | { kind: 'upsert'; uid: string; prior: PodView | undefined; now: PodView }
  | { kind: 'remove'; uid: string; gone: CachedPod };

export interface PodsOptions {
  kube: KubeConnection;
  /** This node: the watch lists only its pods (every node's when absent). */
  nodeName?: string;
  clock: Clock;
  logger: Logger;
  metrics: AgentMetrics;
  goneSlackMs: number;
  relistBackoffMaxMs: number;
  /** The first state from a streaming list (--watch-list). */
  watchList: WatchListMode;
}

export class PodsRunnable implements Runnable {
  readonly name = 'pods';
  readonly cache: PodCache;
  /** Open once the first complete pod list is in: the drain API holds unknown ids until then. */
  readonly synced: SyncGate;
  /** Every upsert and removal, after the cache applied it. */
  readonly changes = new Topic<PodChange>();
  /** The first complete list is in (published once). */
  readonly listed = new Topic<void>();
  /** A relist after a watch gap was applied (pods that came and went meanwhile were never seen). */
  readonly relisted = new Topic<void>();
  private readonly watch: PodWatch;

  constructor(options: PodsOptions) {
    const { logger: log, metrics } = options;
    this.cache = new PodCache(options.goneSlackMs);
    this.synced = new SyncGate(options.clock);
    this.watch = new PodWatch(
      { connection: options.kube, ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }), backoffMaxMs: options.relistBackoffMaxMs, clock: options.clock, logger: log, watchList: options.watchList },
      {
        upsert: (pod) => {
          const uid = podUid(pod);
          const prior = this.cache.view(uid);
          const now = this.cache.upsert(pod).view;
          this.changes.publish({ kind: 'upsert', uid, prior, now });
        },
        remove: (uid) => {
          const gone = this.cache.remove(uid);
          if (gone !== undefined) this.changes.publish({ kind: 'remove', uid, gone });
        },
        // The list/watch relists against the cache's uids (it keeps no second set of keys).
        keys: () => this.cache.knownUids(),
        synced: () => {
          log.info({ pods: this.cache.size }, 'watch: first list synced; ready');
          this.synced.open();
          this.listed.publish();
        },
        relisting: (delayMs) => log.info({ retryInMs: delayMs }, 'watch: resourceVersion too old (410 Gone); relisting from the watch cache'),
        relisted: () => this.relisted.publish(),
        restarting: (error, delayMs) => {
          metrics.watchRestarts.inc();
          log.warn({ err: error, retryInMs: delayMs }, 'watch: failed; restarting after backoff');
        },
      },
    );
  }

  /** The first complete list was applied. */
  get isSynced(): boolean {
    return this.watch.synced;
  }

  /** Synced, with no watch failure since. */
  get isLive(): boolean {
    return this.watch.live;
  }

  /**
   * Lists this node's pods again (a consistent read) and applies the result: a decision taken
   * by time alone runs on this view, never on one a stalled watch left behind. Resolves false
   * when the list failed (the decision waits for the next try).
   */
  resync(): Promise<boolean> {
    return this.watch.resync();
  }

  start(): Promise<void> {
    this.watch.start();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.watch.stop();
  }
}
