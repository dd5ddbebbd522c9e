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
 * - With `watchList` (`auto`/`on`), the initial state comes from a streaming list instead
 *   (watch-list.ts, KEP-3157): one watch with `sendInitialEvents=true` whose ADDED events are
 *   applied as they arrive (no list answer, no buffer of the whole state) and whose
 *   initial-events-end BOOKMARK completes the state: then what the initial events did not
 *   carry is removed (replace semantics, as a relist) and, the first time, `synced` is
 *   reported; the same stream then carries the live events. The first attempt asks the
 *   current state (`resourceVersion=""`, a consistent read the watch cache serves), a later
 *   one (after a 410) the state not older than the last synced resourceVersion; a 410 on the
 *   streaming request itself resets that to `""`, as client-go's reflector. A server that
 *   refuses it (422) or ignores it, or three failed attempts in a row, make `auto` list from
 *   the watch cache as above for the rest of the process life (`fellBack`).
 * - With `fields`, each listed item and watch event is masked before JSON.parse (json-mask.ts)
 *   to those fields and the ones this list/watch reads (watch-fields.ts): the rest of an object
 *   is scanned, never built. (The paged consistent list after a 410 is parsed whole.)
 */
import type { FieldMask } from '../src/field-mask.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { KubeConnection } from './connection.js';
import { JitteredBackoff } from './backoff.js';
import { listPages } from './list-pages.js';
import { streamList } from './list-stream.js';
import { InitialEvents, refusalOf, WATCH_LIST_MAX_FAILURES, watchListQuery, type WatchListMode } from './watch-list.js';
import { watchMasks, type WatchMasks } from './watch-fields.js';
import { streamWatch } from './watch-stream.js';

export interface ListWatchHandlers<T> {
  upsert(obj: T): void;
  /** Deleted (a watch event: `obj` is its last state) or absent from a relist (`obj` undefined). */
  remove(key: string, obj: T | undefined): void;
  /** The first complete state was applied (called once): from a list, or from a streaming list's initial events. */
  synced(via: 'list' | 'stream'): void;
  /** The list or watch failed; retried after `delayMs`. */
  restarting(error: unknown, delayMs: number): void;
  /** A 410 Gone: relisting after `delayMs` (0 the first time in a stable period). */
  relisting?(delayMs: number): void;
  /** `watchList: auto` gave up the streaming list for this process life: lists instead (called once). */
  fellBack?(why: string): void;
  /**
   * The keys the handler holds now (what a relist compares against). Given, the list/watch
   * keeps no set of keys of its own: at cluster scale that second set of the same keys beside
   * the store's own index was a visible share of the heap (docs/scale.md).
   */
  keys?(): Iterable<string>;
}

export interface ListWatchOptions<T> {
  connection: KubeConnection;
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string;
  labelSelector?: string;
  /** A field selector (the agent's own pods: `spec.nodeName=<node>`). */
  fieldSelector?: string;
  /** Items per list page. */
  pageSize?: number;
  /** What is kept of one API object (called on every listed item and watch event). */
  project: (raw: unknown) => T;
  /** The fields `project` and `keyOf` read of an object: only those are decoded (all when absent). */
  fields?: FieldMask;
  keyOf: (obj: T) => string;
  clock: Clock;
  backoffMaxMs: number;
  watchTimeoutSeconds?: number;
  /** The backoff's jitter source (tests pin it). */
  random?: () => number;
  /** The initial state from a streaming list (`auto`: where the server offers it) or a list (`off`, the default). */
  watchList?: WatchListMode;
}

interface WatchObject {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
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
  /** `auto` found the streaming list refused (or failing): lists for the rest of the process life. */
  private streamRefused = false;
  /** Streaming-list attempts in a row that ended before their initial-events-end bookmark. */
  private streamFailures = 0;
  private readonly masks: WatchMasks | undefined;
  /** When the view last moved: a complete state applied, or a watch event (bookmarks too) read. */
  private progressAtMs = Number.NEGATIVE_INFINITY;
  /** A failure since the view was last known complete: changes may be missing until the next list or event. */
  private gap = true;
  /** resync() asked for a fresh state that has not been applied yet. */
  private resyncing = false;
  private resyncWaiters: Array<(applied: boolean) => void> = [];

  constructor(
    private readonly options: ListWatchOptions<T>,
    private readonly handlers: ListWatchHandlers<T>,
  ) {
    this.known = handlers.keys === undefined ? new Set<string>() : undefined;
    this.masks = options.fields === undefined ? undefined : watchMasks(options.fields);
    this.backoff = new JitteredBackoff({ initialMs: BACKOFF_START_MS, maxMs: options.backoffMaxMs, resetAfterMs: BACKOFF_RESET_MS, jitter: 1, now: () => options.clock.now(), random: options.random });
  }

  get synced(): boolean {
    return this.everSynced;
  }

  /** Synced, and no failure since the view was last known complete. */
  get live(): boolean {
    return this.everSynced && !this.gap;
  }

  /** How long ago the view last moved (a complete state applied, or a watch event or bookmark read). */
  progressAgeMs(): number {
    return this.options.clock.now() - this.progressAtMs;
  }

  /**
   * Reads the state again now, as a consistent read (the newest state the server has, not a
   * cache that may lag), and applies it with replace semantics. Resolves true once applied,
   * false when that attempt failed (the list/watch then retries with its backoff as usual) or
   * the list/watch stopped. Calls made while one is pending share it. A decision taken by time
   * alone (a grace that ran out) calls this first: a watch can stall without an error, and
   * such a decision must not rest on a view that missed changes.
   */
  resync(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    const applied = new Promise<boolean>((resolve) => this.resyncWaiters.push(resolve));
    if (!this.resyncing) {
      this.resyncing = true;
      this.resourceVersion = undefined;
      this.syncedRv = undefined;
      this.consistentList = true;
      if (this.timer === undefined) {
        // A watch in flight is replaced; one waiting out a backoff keeps its delay (an API that is down is not hammered).
        this.generation += 1;
        this.abort?.abort();
        this.abort = undefined;
        this.schedule(0);
      }
    }
    return applied;
  }

  /** The view is complete as of now: resync() callers are answered. */
  private markComplete(): void {
    this.gap = false;
    this.progressAtMs = this.options.clock.now();
    this.settleResync(true);
  }

  private settleResync(applied: boolean): void {
    if (this.resyncWaiters.length === 0 && !this.resyncing) return;
    this.resyncing = false;
    const waiters = this.resyncWaiters;
    this.resyncWaiters = [];
    for (const resolve of waiters) resolve(applied);
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.settleResync(false);
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

  /** Whether the next initial state comes from a streaming list. */
  private get streaming(): boolean {
    const mode = this.options.watchList ?? 'off';
    return mode === 'on' || (mode === 'auto' && !this.streamRefused);
  }

  private async cycle(): Promise<void> {
    const generation = ++this.generation;
    const initial = this.resourceVersion === undefined && this.streaming ? new InitialEvents(this.holdsAny()) : undefined;
    try {
      if (initial !== undefined) {
        await this.watch(generation, initial);
        return;
      }
      if (this.resourceVersion === undefined) await this.list(generation);
      if (generation !== this.generation) return;
      await this.watch(generation);
    } catch (error) {
      if (generation === this.generation) this.failed(error, initial);
    }
  }

  /** `initial`: the streaming list whose initial events had not ended when it failed. */
  private failed(error: unknown, initial?: InitialEvents): void {
    if (this.stopped) return;
    this.gap = true;
    this.settleResync(false);
    const gone = statusCode(error) === 410;
    if (gone) this.resourceVersion = undefined; // relist
    if (initial !== undefined && this.streamFailed(error, gone)) return;
    const delay = this.backoff.next(gone);
    if (gone) this.handlers.relisting?.(delay);
    else this.handlers.restarting(initial === undefined ? error : (refusalOf(error) ?? error), delay);
    this.schedule(delay);
  }

  /** A streaming list failed before its end marker; true when `auto` now lists instead (scheduled here). */
  private streamFailed(error: unknown, gone: boolean): boolean {
    this.streamFailures += 1;
    if (gone) this.syncedRv = undefined; // client-go: the streaming request's resourceVersion was refused; ask the current state
    const refused = refusalOf(error);
    if (this.options.watchList !== 'auto') return false;
    if (refused === undefined && this.streamFailures < WATCH_LIST_MAX_FAILURES) return false;
    this.streamRefused = true;
    const why = refused?.why ?? `${this.streamFailures} streaming lists in a row failed (last: ${error instanceof Error ? error.message : String(error)})`;
    this.handlers.fellBack?.(why);
    // A refusal is an answer: list at once. Failures: list after the usual backoff.
    this.schedule(refused === undefined ? this.backoff.next(false) : 0);
    return true;
  }

  /** The initial events ended: what they did not carry is gone (as a relist), the state is complete at `rv`. */
  private finishInitial(initial: InitialEvents, rv: string | undefined): void {
    const { seen } = initial;
    for (const key of seen === undefined ? [] : [...this.heldKeys()]) {
      if (seen?.has(key) === true) continue;
      this.known?.delete(key);
      this.handlers.remove(key, undefined);
    }
    seen?.clear();
    this.resourceVersion = rv ?? '0';
    this.syncedRv = this.resourceVersion;
    this.streamFailures = 0;
    this.markComplete();
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced('stream');
    }
  }

  /** Whether any key is applied yet (only then can a full state remove something). */
  private holdsAny(): boolean {
    return this.heldKeys()[Symbol.iterator]().next().done !== true;
  }

  /** The keys applied so far: the handler's own (`keys`) or the set kept here. */
  private heldKeys(): Iterable<string> {
    return this.known ?? this.handlers.keys?.() ?? [];
  }

  private async list(generation: number): Promise<void> {
    const { connection, path, labelSelector, fieldSelector, pageSize = 500, project, keyOf } = this.options;
    // Only a list that finds keys already held can have removals to find (not the first).
    const seen = this.holdsAny() ? new Set<string>() : undefined;
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
      for await (const page of listPages(connection, path, { labelSelector, fieldSelector, pageSize })) {
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
    for (const key of seen === undefined ? [] : [...this.heldKeys()]) {
      if (seen?.has(key) === true) continue;
      this.known?.delete(key);
      this.handlers.remove(key, undefined);
    }
    this.consistentList = false;
    this.resourceVersion = resourceVersion ?? '0';
    this.syncedRv = this.resourceVersion;
    this.markComplete();
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced('list');
    }
  }

  /**
   * The list from the watch cache (`resourceVersion=0` first, the last synced one after),
   * streamed; a server that paginates it anyway is followed through its continue tokens.
   */
  private async listFromCache(generation: number, take: (raw: unknown) => void): Promise<string | undefined> {
    const { connection, path, labelSelector, fieldSelector } = this.options;
    const first = await streamList(connection, path, { labelSelector, fieldSelector, resourceVersion: this.syncedRv ?? '0' }, take, this.masks?.item);
    let token = first.continue;
    while (token !== undefined && generation === this.generation) {
      const page = await streamList(connection, path, { labelSelector, fieldSelector, continue: token }, take, this.masks?.item);
      token = page.continue;
    }
    return first.resourceVersion;
  }

  /** A watch from the last resourceVersion, or with `initial` a streaming list (its initial events, then live). */
  private async watch(generation: number, initial?: InitialEvents): Promise<void> {
    const { path, labelSelector, fieldSelector, watchTimeoutSeconds = 300, project, keyOf } = this.options;
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
      if (initial !== undefined && !initial.ended) {
        this.initialEvent(generation, initial, type, raw, rv);
        return;
      }
      if (rv !== undefined) {
        this.resourceVersion = rv;
        this.syncedRv = rv;
      }
      // Events flow again after a failure: the watch resumed from the last resourceVersion and replays what it missed.
      this.gap = false;
      this.progressAtMs = this.options.clock.now();
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
      const unfinished = initial !== undefined && !initial.ended ? initial : undefined;
      if (gone || statusCode(error) === 410) {
        this.failed(Object.assign(new Error('410 Gone'), { statusCode: 410 }), unfinished);
      } else if (error !== null && error !== undefined) {
        this.failed(error, unfinished);
      } else if (streamError !== undefined) {
        this.failed(streamError, unfinished);
      } else if (unfinished !== undefined) {
        this.failed(new Error(`watch ${path}: the streaming list ended before its initial-events-end bookmark`), unfinished);
      } else if (events === 0 && this.options.clock.now() - startedAt < MIN_WATCH_MS) {
        this.failed(new Error(`watch ${path}: closed at once without an event`));
      } else {
        this.schedule(0); // a normal end (server timeout): watch again from the last resourceVersion
      }
    };
    const from = initial === undefined ? { resourceVersion: this.resourceVersion, allowWatchBookmarks: true } : watchListQuery(this.syncedRv);
    const query = { labelSelector, fieldSelector, ...from, timeoutSeconds: watchTimeoutSeconds };
    const abort = await streamWatch(this.options.connection, path, query, onEvent, onDone, this.masks === undefined ? {} : { mask: this.masks.event });
    if (generation === this.generation && !this.stopped) this.abort = abort;
    else abort.abort(); // over already (stopped, refused, or done): nothing more is read
  }

  /** One event of a streaming list before its end marker: stored as it arrives, or the end, or a refusal. */
  private initialEvent(generation: number, initial: InitialEvents, type: string, raw: unknown, rv: string | undefined): void {
    const step = initial.event(type, raw);
    if (step === 'take') {
      const obj = this.options.project(raw);
      const key = this.options.keyOf(obj);
      initial.seen?.add(key);
      this.known?.add(key);
      this.handlers.upsert(obj);
    } else if (step === 'end') {
      this.finishInitial(initial, rv);
    } else if (generation === this.generation) {
      // Not a streaming list after all: end this watch; `auto` lists instead.
      this.generation += 1;
      this.abort?.abort();
      this.abort = undefined;
      this.failed(step, initial);
    }
  }
}
