/**
 * The streaming list (KEP-3157, the `WatchList` feature): a watch with
 * `sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true` answers
 * with one ADDED event per object of the current state, then a BOOKMARK whose
 * `metadata.annotations["k8s.io/initial-events-end"]` is `"true"` (the state is complete at
 * its resourceVersion), then live events on the same stream: a list without the list answer.
 *
 * What a server that does not serve it does, and how each is recognised here:
 * - the gate off (1.27-1.31, and 1.33 by default) or a server older than the parameter
 *   (1.19-1.26: `resourceVersionMatch is forbidden for watch`): HTTP 422 `Invalid` before the
 *   stream starts (400 from some proxies) -> refused;
 * - a server or proxy that drops the parameters: a plain watch. Its first event other than
 *   ADDED (a MODIFIED, a DELETED, or a BOOKMARK without the annotation) comes before any end
 *   marker, which a streaming server never sends -> refused;
 * - anything else (5xx, a reset, a stream that ends before its end marker): an ordinary
 *   failure, retried with backoff; several in a row with no end marker also end the attempt.
 */
import type { WatchRequest } from './lister-watcher.js';

export const WATCH_LIST_MODES = ['auto', 'on', 'off'] as const;
/** `auto`: stream where the server offers it, else list (remembered for the process life); `on`: stream only; `off`: list only. */
export type WatchListMode = (typeof WATCH_LIST_MODES)[number];

export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Streaming attempts in a row that fail before their end marker, after which `auto` lists instead. */
export const WATCH_LIST_MAX_FAILURES = 3;

/** The query of a streaming-list watch from `resourceVersion` (`''`: the current state, a consistent read). */
export function watchListQuery(resourceVersion: string | undefined): WatchRequest {
  return { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, resourceVersion: resourceVersion ?? '' };
}

/** A BOOKMARK carrying the initial-events-end annotation. */
export function isInitialEventsEnd(raw: unknown): boolean {
  const annotations = (raw as { metadata?: { annotations?: Record<string, unknown> } } | null | undefined)?.metadata?.annotations;
  return annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}

/** The server does not serve streaming lists (or ignored the request): `auto` lists instead. */
export class WatchListRefused extends Error {
  constructor(readonly why: string) {
    super(`the API server does not serve streaming lists (sendInitialEvents): ${why}`);
    this.name = 'WatchListRefused';
  }
}

/** Whether a failed streaming-list request was refused as invalid (400/422), not a passing fault. */
export function refusalOf(error: unknown): WatchListRefused | undefined {
  if (error instanceof WatchListRefused) return error;
  const code = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  if (code === 422 || code === 400) return new WatchListRefused(error instanceof Error ? error.message : `HTTP ${code}`);
  return undefined;
}

/**
 * The initial-events phase of one streaming-list watch: what it received, in order. `event`
 * says what to do with one watch event while the phase lasts.
 */
export class InitialEvents {
  /**
   * Keys of the objects the initial events carried (the keys a relist would have seen), kept
   * only when something was held before (`track`): the first sync has nothing to remove, and
   * at cluster scale the set would add to the memory peak (docs/scale.md).
   */
  readonly seen: Set<string> | undefined;
  private endedValue = false;

  constructor(track = true) {
    this.seen = track ? new Set<string>() : undefined;
  }

  get ended(): boolean {
    return this.endedValue;
  }

  /**
   * `take`: an initial ADDED, store it; `end`: the end marker, the state is complete;
   * a refusal: the server answered as a plain watch.
   */
  event(type: string, raw: unknown): 'take' | 'end' | WatchListRefused {
    if (type === 'ADDED') return 'take';
    if (type === 'BOOKMARK' && isInitialEventsEnd(raw)) {
      this.endedValue = true;
      return 'end';
    }
    return new WatchListRefused(`a ${type} event came before the initial-events-end bookmark (the server treated the request as a plain watch)`);
  }
}
