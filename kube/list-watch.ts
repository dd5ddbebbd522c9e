/**
 * A restarting list/watch of one resource (all namespaces), shared by the pod watch and the
 * janitor's EndpointSlice watch. It asks its ListerWatcher (lister-watcher.ts) for list pages
 * and watch streams: over node:http(s) on a KubeConnection (http-lister-watcher.ts: the
 * watch a stream of JSON lines, the list a streamed GET), or whatever the caller hands in.
 *
 * - List from the API server's watch cache as client-go's informers do: the first list with
 *   `resourceVersion=0`, a relist with the last resourceVersion synced (both served from the
 *   cache, not a quorum read of etcd; the cache ignores `limit`, so the body is decoded as it
 *   streams in, list-stream.ts, and each item projected at once: neither the whole list nor
 *   whole objects stay in memory). Only after a list answered 410 (that resourceVersion is
 *   gone from the cache) does the next one read from etcd, in pages (`limit`/`continue`),
 *   each page decoded as it streams in too.
 *   A relist removes what is no longer there (only keys are kept: list-watch-store.ts).
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
 *   the watch cache as above for the rest of the process life (`fellBack`; watch-list-choice.ts).
 * - With `fields` (over HTTP), each listed item and watch event is masked before JSON.parse
 *   (json-mask.ts) to those fields and the ones this list/watch reads (watch-fields.ts): the
 *   rest of an object is scanned, never built.
 */
import type { FieldMask } from '../src/field-mask.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { KubeConnection } from './connection.js';
import { JitteredBackoff } from './backoff.js';
import { HttpListerWatcher } from './http-lister-watcher.js';
import { ListWatchStore } from './list-watch-store.js';
import type { ListerWatcher, ListRequest, Selectors, WatchHandle } from './lister-watcher.js';
import { InitialEvents, refusalOf, watchListQuery, type WatchListMode } from './watch-list.js';
import { WatchListChoice } from './watch-list-choice.js';
import { statusCode, WatchOutcome } from './watch-outcome.js';

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
  /**
   * A complete state was applied again after the first (a relist, or a streaming list's
   * initial events) that may have missed changes: the watch had failed, or had delivered
   * nothing for `LOSSY_SILENCE_MS` (a stall looks like silence). An object created and deleted
   * in between is in no event and no list: whoever must act on every object that went (the
   * conntrack sweep) learns here that some may have gone unseen.
   */
  relisted?(): void;
  /** `watchList: auto` gave up the streaming list for this process life: lists instead (called once). */
  fellBack?(why: string): void;
  /**
   * The keys the handler holds now (what a relist compares against). Given, the list/watch
   * keeps no set of keys of its own: at cluster scale that second set of the same keys beside
   * the store's own index was a visible share of the heap (docs/scale.md).
   */
  keys?(): Iterable<string>;
}

/** Over HTTP: the collection at `path` on `connection`. */
export interface HttpSource {
  connection: KubeConnection;
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string;
  /** The fields `project` and `keyOf` read of an object: only those are decoded (all when absent). */
  fields?: FieldMask;
  /** List and watch in protobuf where the server offers it (kinds kube/protobuf/ decodes: EndpointSlice). */
  protobuf?: boolean;
}

/** Any other source of list pages and watch streams (unit tests: a scripted one). */
export interface ListerWatcherSource {
  listerWatcher: ListerWatcher;
}

export type ListWatchOptions<T> = ListWatchSettings<T> & (HttpSource | ListerWatcherSource);

export interface ListWatchSettings<T> {
  labelSelector?: string;
  /** A field selector (the agent's own pods: `spec.nodeName=<node>`). */
  fieldSelector?: string;
  /** Items per page of a consistent (paged) list. */
  pageSize?: number;
  /** What is kept of one API object (called on every listed item and watch event). */
  project: (raw: unknown) => T;
  keyOf: (obj: T) => string;
  clock: Clock;
  backoffMaxMs: number;
  watchTimeoutSeconds?: number;
  /** The backoff's jitter source (tests pin it). */
  random?: () => number;
  /** The initial state from a streaming list (`auto`: where the server offers it) or a list (`off`, the default). */
  watchList?: WatchListMode;
}

/** What the list/watch reads of a watch event's object. */
interface WatchObject {
  metadata?: { resourceVersion?: string };
}

const BACKOFF_START_MS = 250;
/** client-go's reflector: the backoff resets after this long without a failure. */
const BACKOFF_RESET_MS = 120_000;
/** A resync() asked during a longer backoff retries within this (a caller is waiting on the view). */
const RESYNC_WAIT_MAX_MS = 2000;
/** A relist after the watch delivered nothing for this long may have missed objects that came and went. */
const LOSSY_SILENCE_MS = 2000;

export class RestartingListWatch<T> {
  private readonly store: ListWatchStore<T>;
  private resourceVersion: string | undefined;
  private everSynced = false;
  /** The last list's or watch event's resourceVersion: a relist reads the watch cache at it. */
  private syncedRv: string | undefined;
  /** A list answered 410: the next list is a consistent (etcd) read. */
  private consistentList = false;
  private readonly backoff: JitteredBackoff;
  private timer: TimerHandle | undefined;
  private timerAtMs = 0;
  private abort: WatchHandle | undefined;
  /** Bumped on every (re)start and on stop: callbacks of an older watch are ignored. */
  private generation = 0;
  private stopped = false;
  private readonly watchList: WatchListChoice;
  private readonly source: ListerWatcher;
  /** When the view last moved: a complete state applied, or a watch event (bookmarks too) read. */
  private progressAtMs = Number.NEGATIVE_INFINITY;
  /** A failure since the view was last known complete: changes may be missing until the next list or event. */
  private gap = true;
  /** A relist begun after a gap or a silence is pending (`relisted` is due once it completes). */
  private lossyRelist = false;
  /** resync() asked for a fresh state that has not been applied yet. */
  private resyncing = false;
  private resyncWaiters: Array<(applied: boolean) => void> = [];

  constructor(
    private readonly options: ListWatchOptions<T>,
    private readonly handlers: ListWatchHandlers<T>,
  ) {
    this.store = new ListWatchStore(options.project, options.keyOf, handlers);
    this.watchList = new WatchListChoice(options.watchList ?? 'off');
    this.source = 'listerWatcher' in options ? options.listerWatcher : new HttpListerWatcher(options.connection, options.path, options.fields, options.protobuf === true);
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
        // A watch in flight is replaced.
        this.endWatch();
        this.schedule(0);
      } else if (this.timerAtMs - this.options.clock.now() > RESYNC_WAIT_MAX_MS) {
        // One waiting out a long backoff tries sooner, still a second or two apart (an API that is
        // down is not hammered): a caller is waiting on this view (a preStop call, a grace that ran out).
        this.timer.cancel();
        this.timer = undefined;
        this.schedule(RESYNC_WAIT_MAX_MS / 2 + (this.options.random ?? Math.random)() * (RESYNC_WAIT_MAX_MS / 2));
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
    this.timer?.cancel();
    this.timer = undefined;
    this.endWatch();
    await Promise.resolve();
  }

  /** Ends the watch in flight: nothing more is read of it, and its late callbacks are ignored. */
  private endWatch(): void {
    this.generation += 1;
    this.abort?.abort();
    this.abort = undefined;
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timerAtMs = this.options.clock.now() + delayMs;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.cycle();
    }, delayMs);
  }

  private async cycle(): Promise<void> {
    const generation = ++this.generation;
    const initial = this.resourceVersion === undefined && this.watchList.streaming ? new InitialEvents(this.store.holdsAny()) : undefined;
    if (this.resourceVersion === undefined && this.everSynced && (this.gap || this.progressAgeMs() > LOSSY_SILENCE_MS)) this.lossyRelist = true;
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
    if (gone) this.syncedRv = undefined; // client-go: the streaming request's resourceVersion was refused; ask the current state
    const givenUp = this.watchList.failed(error);
    if (givenUp === undefined) return false;
    this.handlers.fellBack?.(givenUp.why);
    // A refusal is an answer: list at once. Failures: list after the usual backoff.
    this.schedule(givenUp.refused ? 0 : this.backoff.next(false));
    return true;
  }

  /** The initial events ended: what they did not carry is gone (as a relist), the state is complete at `rv`. */
  private finishInitial(initial: InitialEvents, rv: string | undefined): void {
    this.store.removeAbsent(initial.seen);
    initial.seen?.clear();
    this.watchList.succeeded();
    this.completed(rv, 'stream');
  }

  /** A complete state was applied, at `rv`: the watch goes on from there; `synced` the first time. */
  private completed(rv: string | undefined, via: 'list' | 'stream'): void {
    this.resourceVersion = rv ?? '0';
    this.syncedRv = this.resourceVersion;
    this.markComplete();
    if (!this.everSynced) {
      this.everSynced = true;
      this.handlers.synced(via);
    } else if (this.lossyRelist) {
      this.lossyRelist = false;
      this.handlers.relisted?.();
    }
  }

  private async list(generation: number): Promise<void> {
    // Only a list that finds keys already held can have removals to find (not the first).
    const seen = this.store.holdsAny() ? new Set<string>() : undefined;
    const take = (raw: unknown): void => {
      if (generation === this.generation) this.store.upsert(raw, seen);
    };
    let resourceVersion: string | undefined;
    try {
      resourceVersion = await this.listPages(generation, take);
    } catch (error) {
      if (statusCode(error) === 410) this.consistentList = true;
      throw error;
    }
    if (generation !== this.generation) return;
    this.store.removeAbsent(seen);
    this.consistentList = false;
    this.completed(resourceVersion, 'list');
  }

  /**
   * Every page of one list; resolves with the first page's resourceVersion (the list's). From
   * the watch cache (`resourceVersion=0` first, the last synced one after) it is one streamed
   * answer, and a server that paginates it anyway is followed through its continue tokens;
   * after a 410, a consistent read in pages of `pageSize`.
   */
  private async listPages(generation: number, take: (raw: unknown) => void): Promise<string | undefined> {
    const { labelSelector, fieldSelector, pageSize = 500 } = this.options;
    const selectors: Selectors = { labelSelector, fieldSelector };
    const paging: ListRequest = this.consistentList ? { ...selectors, limit: pageSize } : selectors;
    const first = await this.source.list(this.consistentList ? paging : { ...selectors, resourceVersion: this.syncedRv ?? '0' }, take);
    let token = first.continue;
    while (token !== undefined && token !== '' && generation === this.generation) {
      token = (await this.source.list({ ...paging, continue: token }, take)).continue;
    }
    return first.resourceVersion;
  }

  /** A watch from the last resourceVersion, or with `initial` a streaming list (its initial events, then live). */
  private async watch(generation: number, initial?: InitialEvents): Promise<void> {
    const { labelSelector, fieldSelector, watchTimeoutSeconds = 300 } = this.options;
    const outcome = new WatchOutcome(this.source.what, this.options.clock.now());
    const onEvent = (type: string, raw: unknown): void => {
      if (generation !== this.generation) return;
      if (type === 'ERROR') {
        outcome.errorEvent(raw);
        return;
      }
      outcome.counted();
      const rv = (raw as WatchObject | undefined)?.metadata?.resourceVersion;
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
      if (type === 'ADDED' || type === 'MODIFIED') this.store.upsert(raw);
      else if (type === 'DELETED') this.store.delete(raw);
      // BOOKMARK: only the resourceVersion moves.
    };
    const onDone = (error: unknown): void => {
      if (generation !== this.generation || this.stopped) return;
      this.abort = undefined;
      this.generation += 1; // this watch is over: late callbacks are ignored
      const unfinished = initial !== undefined && !initial.ended ? initial : undefined;
      const failure = outcome.failure(error, unfinished !== undefined, this.options.clock.now());
      if (failure !== undefined) this.failed(failure, unfinished);
      else this.schedule(0); // a normal end (server timeout): watch again from the last resourceVersion
    };
    const from = initial === undefined ? { resourceVersion: this.resourceVersion, allowWatchBookmarks: true } : watchListQuery(this.syncedRv);
    const query = { labelSelector, fieldSelector, ...from, timeoutSeconds: watchTimeoutSeconds };
    const abort = await this.source.watch(query, onEvent, onDone);
    if (generation === this.generation && !this.stopped) this.abort = abort;
    else abort.abort(); // over already (stopped, refused, or done): nothing more is read
  }

  /** One event of a streaming list before its end marker: stored as it arrives, or the end, or a refusal. */
  private initialEvent(generation: number, initial: InitialEvents, type: string, raw: unknown, rv: string | undefined): void {
    const step = initial.event(type, raw);
    if (step === 'take') {
      this.store.upsert(raw, initial.seen);
    } else if (step === 'end') {
      this.finishInitial(initial, rv);
    } else if (generation === this.generation) {
      // Not a streaming list after all: end this watch; `auto` lists instead.
      this.endWatch();
      this.failed(step, initial);
    }
  }
}
