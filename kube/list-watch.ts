/**
 * A restarting list/watch of one resource (all namespaces), shared by the pod watch and the
 * janitor's EndpointSlice watch, over node:http(s) on the KubeConnection: the watch is a
 * stream of JSON lines (watch-stream.ts), the list a streamed GET (list-stream.ts).
 *
 * - List from the API server's watch cache as client-go's informers do: the first list with
 *   `resourceVersion=0`, a relist with the last resourceVersion synced (both served from the
 *   cache, not a quorum read of etcd; the cache ignores `limit`, so the body is decoded as it
 *   streams in, list-stream.ts, and each item projected at once: neither the whole list nor
 *   whole objects stay in memory). Only after a list answered 410 (that resourceVersion is
 *   gone from the cache) does the next one read from etcd, in pages (`limit`/`continue`).
 *   A relist removes what is no longer there (only keys are kept here).
 * - Watch from the list's resourceVersion with bookmarks and a server-side timeout; a watch
 *   that ends normally is renewed from the last resourceVersion seen.
 * - 410 Gone (an HTTP 410 or an ERROR event carrying code 410): relist, at once the first
 *   time, then with the same backoff as errors (a server that 410s every watch is not
 *   relisted in a hot loop).
 * - Any failure: `restarting(error, delay)`, then retry after a jittered exponential backoff
 *   from 250 ms to `backoffMaxMs` (backoff.ts; reset after 2 minutes without a failure, as
 *   client-go's reflector), from the last resourceVersion (a relist when that one is too old).
 * - `synced` is reported once, after the first complete list was applied (readiness).
 */
import type { Clock, TimerHandle } from './clock.js';
import type { KubeConnection } from './connection.js';
import { JitteredBackoff } from './backoff.js';
import { listPages } from './list-pages.js';
import { streamList } from './list-stream.js';
import { streamWatch } from './watch-stream.js';

export interface ListWatchHandlers<T> {
  upsert(obj: T): void;
  /** Deleted (a watch event: `obj` is its last state) or absent from a relist (`obj` undefined). */
  remove(key: string, obj: T | undefined): void;
  /** The first complete list was applied (called once). */
  synced(): void;
  /** The list or watch failed; retried after `delayMs`. */
  restarting(error: unknown, delayMs: number): void;
  /** A 410 Gone: relisting after `delayMs` (0 the first time in a stable period). */
  relisting?(delayMs: number): void;
  /**
   * The keys the handler holds now (what a relist compares against). Given, the list/watch
   * keeps no set of keys of its own: at 150,000 pods that set was 5 MB beside the store's
   * own index of the same keys.
   */
  keys?(): Iterable<string>;
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
  /** The backoff's jitter source (tests pin it). */
  random?: () => number;
}

interface WatchObject {
  metadata?: { resourceVersion?: string };
  code?: number;
  message?: string;
}

const BACKOFF_START_MS = 250;
/** client-go's reflector: the backoff resets after this long without a failure. */
const BACKOFF_RESET_MS = 120_000;
/** A watch that ends normally sooner than this, with no event, is retried with backoff (no hot loop). */
const MIN_WATCH_MS = 1000;

function statusCode(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export class RestartingListWatch<T> {
  /** The keys applied, when the handler does not say (`keys`). */
  private readonly known: Set<string> | undefined;
  private resourceVersion: string | undefined;
  private everSynced = false;
  /** The last list's or watch event's resourceVersion: a relist reads the watch cache at it. */
  private syncedRv: string | undefined;
  /** A list answered 410: the next list is a consistent (etcd) read. */
  private consistentList = false;
  private readonly backoff: JitteredBackoff;
  private timer: TimerHandle | undefined;
  private abort: AbortController | undefined;
  /** Bumped on every (re)start and on stop: callbacks of an older watch are ignored. */
  private generation = 0;
  private stopped = false;

  constructor(
    private readonly options: ListWatchOptions<T>,
    private readonly handlers: ListWatchHandlers<T>,
  ) {
    this.known = handlers.keys === undefined ? new Set<string>() : undefined;
    this.backoff = new JitteredBackoff({ initialMs: BACKOFF_START_MS, maxMs: options.backoffMaxMs, resetAfterMs: BACKOFF_RESET_MS, jitter: 1, now: () => options.clock.now(), random: options.random });
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
    const gone = statusCode(error) === 410;
    if (gone) this.resourceVersion = undefined; // relist
    const delay = this.backoff.next(gone);
    if (gone) this.handlers.relisting?.(delay);
    else this.handlers.restarting(error, delay);
    this.schedule(delay);
  }

  private async list(generation: number): Promise<void> {
    const { connection, path, labelSelector, pageSize = 500, project, keyOf } = this.options;
    // Only a list that finds keys already held can have removals to find (not the first).
    const held = (): Iterable<string> => this.known ?? this.handlers.keys?.() ?? [];
    const seen = held()[Symbol.iterator]().next().done === true ? undefined : new Set<string>();
    const take = (raw: unknown): void => {
      if (generation !== this.generation) return;
      const obj = project(raw);
      const key = keyOf(obj);
      seen?.add(key);
      this.known?.add(key);
      this.handlers.upsert(obj);
    };
    let resourceVersion: string | undefined;
    if (this.consistentList) {
      for await (const page of listPages(connection, path, { labelSelector, pageSize })) {
        if (generation !== this.generation) return;
        resourceVersion ??= page.metadata?.resourceVersion;
        for (const raw of page.items ?? []) take(raw);
      }
    } else {
      try {
        resourceVersion = await this.listFromCache(generation, take);
      } catch (error) {
        if (statusCode(error) === 410) this.consistentList = true;
        throw error;
      }
    }
    if (generation !== this.generation) return;
    for (const key of seen === undefined ? [] : [...held()]) {
      if (seen?.has(key) === true) continue;
      this.known?.delete(key);
      this.handlers.remove(key, undefined);
    }
    this.consistentList = false;
    this.resourceVersion = resourceVersion ?? '0';
    this.syncedRv = this.resourceVersion;
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced();
    }
  }

  /**
   * The list from the watch cache (`resourceVersion=0` first, the last synced one after),
   * streamed; a server that paginates it anyway is followed through its continue tokens.
   */
  private async listFromCache(generation: number, take: (raw: unknown) => void): Promise<string | undefined> {
    const { connection, path, labelSelector } = this.options;
    const first = await streamList(connection, path, { labelSelector, resourceVersion: this.syncedRv ?? '0' }, take);
    let token = first.continue;
    while (token !== undefined && generation === this.generation) {
      const page = await streamList(connection, path, { labelSelector, continue: token }, take);
      token = page.continue;
    }
    return first.resourceVersion;
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
      if (rv !== undefined) {
        this.resourceVersion = rv;
        this.syncedRv = rv;
      }
      if (type === 'ADDED' || type === 'MODIFIED') {
        const obj = project(raw);
        this.known?.add(keyOf(obj));
        this.handlers.upsert(obj);
      } else if (type === 'DELETED') {
        const obj = project(raw);
        const key = keyOf(obj);
        this.known?.delete(key);
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
    const abort = await streamWatch(this.options.connection, path, query, onEvent, onDone);
    if (generation === this.generation && !this.stopped) this.abort = abort;
    else if (this.stopped) abort.abort();
  }
}
