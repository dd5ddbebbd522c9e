/**
 * A restarting list/watch of one resource (all namespaces), shared by the pod watch and the
 * janitor's EndpointSlice watch. The watch itself is `@kubernetes/client-node`'s `Watch`
 * (imported narrowly: the package root would load every generated client, ~73 MB RSS);
 * the list is a paginated GET over the same connection.
 *
 * - List in pages (`limit`/`continue`), projecting each item at once (`project`: keep only
 *   what the consumer reads), so neither a whole list nor whole objects stay in memory.
 *   A relist removes what is no longer there (only keys are kept here).
 * - Watch from the list's resourceVersion with bookmarks and a server-side timeout; a watch
 *   that ends normally is renewed from the last resourceVersion seen.
 * - 410 Gone (an HTTP 410 or an ERROR event carrying code 410): relist at once, not an error.
 * - Any other failure: `restarting(error, delay)`, then retry after a backoff doubling from
 *   250 ms to `backoffMaxMs` (reset once a list or an event gets through), from the last
 *   resourceVersion (a relist when that one is too old: 410).
 * - `synced` is reported once, after the first complete list was applied (readiness).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node/dist/watch.js';
import type { Clock, TimerHandle } from '../clock.js';
import type { KubeConnection } from './connection.js';
import { listPages } from './list-pages.js';

export interface ListWatchHandlers<T> {
  upsert(obj: T): void;
  /** Deleted (a watch event: `obj` is its last state) or absent from a relist (`obj` undefined). */
  remove(key: string, obj: T | undefined): void;
  /** The first complete list was applied (called once). */
  synced(): void;
  /** The list or watch failed; retried after `delayMs`. */
  restarting(error: unknown, delayMs: number): void;
}

export interface ListWatchOptions<T> {
  connection: KubeConnection;
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string;
  labelSelector?: string;
  /** Items per list page. */
  pageSize?: number;
  /** What is kept of one API object (called on every listed item and watch event). */
  project: (raw: unknown) => T;
  keyOf: (obj: T) => string;
  clock: Clock;
  backoffMaxMs: number;
  watchTimeoutSeconds?: number;
}

interface WatchObject {
  metadata?: { resourceVersion?: string };
  code?: number;
  message?: string;
}

const BACKOFF_START_MS = 250;
/** A watch that ends normally sooner than this, with no event, is retried with backoff (no hot loop). */
const MIN_WATCH_MS = 1000;

function statusCode(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export class RestartingListWatch<T> {
  private readonly known = new Set<string>();
  private resourceVersion: string | undefined;
  private everSynced = false;
  private backoffMs = BACKOFF_START_MS;
  private timer: TimerHandle | undefined;
  private abort: AbortController | undefined;
  /** Bumped on every (re)start and on stop: callbacks of an older watch are ignored. */
  private generation = 0;
  private stopped = false;
  private readonly watcher: Watch;

  constructor(
    private readonly options: ListWatchOptions<T>,
    private readonly handlers: ListWatchHandlers<T>,
  ) {
    // The Watch calls only getCurrentCluster() and applyToFetchOptions() on its config.
    this.watcher = new Watch(options.connection as unknown as KubeConfig);
  }

  get synced(): boolean {
    return this.everSynced;
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation += 1;
    this.timer?.cancel();
    this.timer = undefined;
    this.abort?.abort();
    this.abort = undefined;
    await Promise.resolve();
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.cycle();
    }, delayMs);
  }

  private async cycle(): Promise<void> {
    const generation = ++this.generation;
    try {
      if (this.resourceVersion === undefined) await this.list(generation);
      if (generation !== this.generation) return;
      await this.watch(generation);
    } catch (error) {
      if (generation === this.generation) this.failed(error);
    }
  }

  private failed(error: unknown): void {
    if (this.stopped) return;
    if (statusCode(error) === 410) {
      this.resourceVersion = undefined; // relist at once: not an error
      this.schedule(0);
      return;
    }
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.backoffMaxMs);
    this.handlers.restarting(error, delay);
    this.schedule(delay);
  }

  private async list(generation: number): Promise<void> {
    const { connection, path, labelSelector, pageSize = 500, project, keyOf } = this.options;
    const seen = new Set<string>();
    let resourceVersion: string | undefined;
    for await (const page of listPages(connection, path, { labelSelector, pageSize })) {
      if (generation !== this.generation) return;
      resourceVersion ??= page.metadata?.resourceVersion;
      for (const raw of page.items ?? []) {
        const obj = project(raw);
        const key = keyOf(obj);
        seen.add(key);
        this.known.add(key);
        this.handlers.upsert(obj);
      }
    }
    for (const key of [...this.known]) {
      if (seen.has(key)) continue;
      this.known.delete(key);
      this.handlers.remove(key, undefined);
    }
    this.resourceVersion = resourceVersion ?? '0';
    this.backoffMs = BACKOFF_START_MS;
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced();
    }
  }

  private async watch(generation: number): Promise<void> {
    const { path, labelSelector, watchTimeoutSeconds = 300, project, keyOf } = this.options;
    const startedAt = this.options.clock.now();
    let events = 0;
    let gone = false;
    let streamError: Error | undefined;
    const onEvent = (type: string, raw: unknown): void => {
      if (generation !== this.generation) return;
      const rv = (raw as WatchObject | undefined)?.metadata?.resourceVersion;
      if (type === 'ERROR') {
        const status = raw as WatchObject;
        if (status.code === 410) gone = true;
        else streamError = Object.assign(new Error(`watch ${path}: ${status.message ?? 'ERROR event'}`), { statusCode: status.code });
        return;
      }
      events += 1;
      this.backoffMs = BACKOFF_START_MS;
      if (rv !== undefined) this.resourceVersion = rv;
      if (type === 'ADDED' || type === 'MODIFIED') {
        const obj = project(raw);
        this.known.add(keyOf(obj));
        this.handlers.upsert(obj);
      } else if (type === 'DELETED') {
        const obj = project(raw);
        const key = keyOf(obj);
        this.known.delete(key);
        this.handlers.remove(key, obj);
      }
      // BOOKMARK: only the resourceVersion moves.
    };
    const onDone = (error: unknown): void => {
      if (generation !== this.generation || this.stopped) return;
      this.abort = undefined;
      this.generation += 1; // this watch is over: late callbacks are ignored
      if (gone || statusCode(error) === 410) {
        this.failed(Object.assign(new Error('410 Gone'), { statusCode: 410 }));
      } else if (error !== null && error !== undefined) {
        this.failed(error);
      } else if (streamError !== undefined) {
        this.failed(streamError);
      } else if (events === 0 && this.options.clock.now() - startedAt < MIN_WATCH_MS) {
        this.failed(new Error(`watch ${path}: closed at once without an event`));
      } else {
        this.schedule(0); // a normal end (server timeout): watch again from the last resourceVersion
      }
    };
    const query = { labelSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: watchTimeoutSeconds };
    const abort = await this.watcher.watch(path, query, onEvent, onDone);
    if (generation === this.generation && !this.stopped) this.abort = abort;
    else if (this.stopped) abort.abort();
  }
}
