/**
 * List/watch of this node's managed pods (label conndrain.io/managed=true, field
 * spec.nodeName=<node>, the one field the API server's watch cache indexes pods by): the shared
 * restarting list/watch (kube/list-watch.ts: `@kubernetes/client-node`'s Watch; the initial
 * state from a streaming list where the API server offers it, else a list from the watch cache
 * decoded as it streams; relist on 410, jittered backoff restarts) with each pod pruned to the
 * fields conndrain reads as it arrives (decoded only those: POD_FIELDS masks the bytes before
 * JSON.parse), so no full pod object is ever built.
 */
import type { Logger } from 'pino';
import { MANAGED_SELECTOR } from '../../src/contract.js';
import type { PodLike } from '../../src/pod/pod-like.js';
import { POD_FIELDS, prunePod } from '../../src/pod/prune.js';
import type { Clock } from '../../time/clock.js';
import type { KubeConnection } from '../../kube/connection.js';
import { RestartingListWatch } from '../../kube/list-watch.js';
import type { WatchListMode } from '../../kube/watch-list.js';

export interface PodWatchHandlers {
  upsert(pod: PodLike): void;
  /** The pod left (deleted, or absent from a relist): its uid. */
  remove(uid: string): void;
  /** The first list was applied (called once). */
  synced(): void;
  /** The watch failed and will restart after `delayMs`. */
  restarting(error: unknown, delayMs: number): void;
  /** A 410 Gone: relisting after `delayMs` (jittered backoff when it repeats). */
  relisting?(delayMs: number): void;
  /** A relist after a watch gap was applied: pods that came and went in the gap were never seen. */
  relisted?(): void;
  /** The uids held now (the store's): then the list/watch keeps no set of uids of its own. */
  keys?(): Iterable<string>;
}

export interface PodWatchOptions {
  connection: KubeConnection;
  /** This node: only its pods are watched (the rest of the cluster comes from EndpointSlices); every node's when absent (tools). */
  nodeName?: string;
  backoffMaxMs: number;
  clock: Clock;
  logger: Logger;
  /** Server-side watch timeout; the watch is then renewed from the last resourceVersion. */
  watchTimeoutSeconds?: number;
  /** Pods per list page. */
  pageSize?: number;
  /** The initial state from a streaming list (`sendInitialEvents`) where the server offers it (`auto`, the default), always (`on`), or a list (`off`). */
  watchList?: WatchListMode;
}

/** A pod's identity in the cache: its uid (namespace/name for objects without one). */
export function podUid(pod: PodLike): string {
  return pod.metadata?.uid ?? `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

export class PodWatch {
  private readonly lw: RestartingListWatch<PodLike>;

  constructor(options: PodWatchOptions, handlers: PodWatchHandlers) {
    this.lw = new RestartingListWatch<PodLike>(
      {
        connection: options.connection,
        path: '/api/v1/pods',
        labelSelector: MANAGED_SELECTOR,
        ...(options.nodeName === undefined ? {} : { fieldSelector: `spec.nodeName=${options.nodeName}` }),
        pageSize: options.pageSize ?? 100,
        project: (raw) => prunePod(raw as PodLike),
        fields: POD_FIELDS,
        keyOf: podUid,
        clock: options.clock,
        backoffMaxMs: options.backoffMaxMs,
        watchTimeoutSeconds: options.watchTimeoutSeconds ?? 300,
        watchList: options.watchList ?? 'auto',
      },
      {
        upsert: (pod) => handlers.upsert(pod),
        remove: (uid) => handlers.remove(uid),
        synced: (via) => {
          options.logger.info({ via: via === 'stream' ? 'streaming list (sendInitialEvents)' : 'list from the watch cache' }, 'watch: initial pod state complete');
          handlers.synced();
        },
        restarting: (error, delayMs) => handlers.restarting(error, delayMs),
        relisting: (delayMs) => handlers.relisting?.(delayMs),
        relisted: () => handlers.relisted?.(),
        fellBack: (why) => options.logger.warn({ why }, 'watch: the API server does not serve streaming lists; listing from the watch cache for the rest of this process life (--watch-list=auto)'),
        ...(handlers.keys === undefined ? {} : { keys: () => handlers.keys?.() ?? [] }),
      },
    );
  }

  get synced(): boolean {
    return this.lw.synced;
  }

  /** Synced, and no watch failure since the view was last complete. */
  get live(): boolean {
    return this.lw.live;
  }

  /** A fresh, consistent list of this node's pods, applied (true) or failed (false). */
  resync(): Promise<boolean> {
    return this.lw.resync();
  }

  start(): void {
    this.lw.start();
  }

  stop(): Promise<void> {
    return this.lw.stop();
  }
}
