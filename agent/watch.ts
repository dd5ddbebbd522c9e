/**
 * List/watch of managed pods in every namespace with `@kubernetes/client-node`'s ListWatch.
 *
 * - The library relists by itself on 410 Gone (an HTTP 410 or an ERROR event with code 410).
 * - On any other error its informer stops and emits 'error': we restart it after a backoff
 *   (doubling from 250 ms up to `backoffMaxMs`, reset once a list or an event gets through),
 *   and count the restart.
 * - `synced` is false until the first list has been applied to the cache (readiness).
 * - Watches ask for bookmarks and a server-side timeout, so an idle connection is renewed
 *   and a quiet cluster's resourceVersion stays fresh.
 */
import { CoreV1Api, KubeConfig, ListWatch, Watch, type V1Pod, type V1PodList } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { MANAGED_SELECTOR } from '../src/contract.js';
import type { PodLike } from '../src/pod/pod-like.js';
import { prunePod } from '../src/pod/prune.js';
import type { Clock, TimerHandle } from './clock.js';

export interface PodWatchHandlers {
  upsert(pod: PodLike): void;
  remove(pod: PodLike): void;
  /** The first list was applied (called once). */
  synced(): void;
  /** The watch failed and will restart after `delayMs`. */
  restarting(error: unknown, delayMs: number): void;
}

export interface PodWatchOptions {
  kubeConfig: KubeConfig;
  backoffMaxMs: number;
  clock: Clock;
  logger: Logger;
  /** Server-side watch timeout; the library then re-watches from the last resourceVersion. */
  watchTimeoutSeconds?: number;
}

const BACKOFF_START_MS = 250;

/** Adds `allowWatchBookmarks` and `timeoutSeconds` to every watch request, and reports each one. */
class BookmarkWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly timeoutSeconds: number,
    private readonly onWatch: () => void,
    private readonly onLine: () => void,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.onWatch();
    const params = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.timeoutSeconds };
    return super.watch(path, params, (phase: string, obj: unknown, watchObj: unknown) => {
      this.onLine();
      const keep: unknown = phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? prunePod(obj as PodLike) : obj;
      callback(phase, keep, watchObj);
    }, done);
  }
}

export class PodWatch {
  private listWatch: ListWatch<V1Pod> | undefined;
  private pendingSync = false;
  private everSynced = false;
  private backoffMs = BACKOFF_START_MS;
  private restartTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly options: PodWatchOptions,
    private readonly handlers: PodWatchHandlers,
  ) {}

  get synced(): boolean {
    return this.everSynced;
  }

  start(): void {
    const { kubeConfig, watchTimeoutSeconds = 300 } = this.options;
    const api = kubeConfig.makeApiClient(CoreV1Api);
    const list = async (): Promise<V1PodList> => {
      const result = await api.listPodForAllNamespaces({ labelSelector: MANAGED_SELECTOR });
      // Both the library's cache and ours keep only what the agent reads (memory).
      result.items = result.items.map((pod) => prunePod(pod as PodLike) as V1Pod);
      this.pendingSync = true;
      this.backoffMs = BACKOFF_START_MS;
      return result;
    };
    const watch = new BookmarkWatch(
      kubeConfig,
      watchTimeoutSeconds,
      () => this.onWatchStarted(),
      () => {
        this.backoffMs = BACKOFF_START_MS;
      },
    );
    const lw = new ListWatch<V1Pod>('/api/v1/pods', watch, list, false, MANAGED_SELECTOR);
    lw.on('add', (pod) => this.handlers.upsert(pod));
    lw.on('update', (pod) => this.handlers.upsert(pod));
    lw.on('delete', (pod) => this.handlers.remove(pod));
    lw.on('error', (error: unknown) => this.scheduleRestart(error));
    this.listWatch = lw;
    this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.restartTimer?.cancel();
    await this.listWatch?.stop();
  }

  /** The list just applied (ListWatch adds the items, then opens the watch). */
  private onWatchStarted(): void {
    if (!this.pendingSync) return;
    this.pendingSync = false;
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced();
    }
  }

  private run(): void {
    const lw = this.listWatch;
    if (lw === undefined || this.stopped) return;
    lw.start().catch((error: unknown) => this.scheduleRestart(error));
  }

  private scheduleRestart(error: unknown): void {
    if (this.stopped || this.restartTimer !== undefined) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.backoffMaxMs);
    this.handlers.restarting(error, delay);
    this.restartTimer = this.options.clock.setTimeout(() => {
      this.restartTimer = undefined;
      this.run();
    }, delay);
  }
}
