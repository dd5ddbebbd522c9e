/**
 * The seam between the restarting list/watch (list-watch.ts) and the API server, as client-go
 * gives its reflector a ListerWatcher: list one page, open one watch stream. The list/watch
 * decides what to ask (which resourceVersion, a consistent read or the watch cache, paging, a
 * streaming list) and what the answers mean; an implementation only carries one request.
 * The one that ships speaks HTTP (http-lister-watcher.ts); unit tests hand in a scripted one.
 */
import type { ListMetadata } from './list-decoder.js';

/** Which objects of the collection: the same on every list and watch of one list/watch (types, not interfaces: they are also query records). */
export type Selectors = {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
};

/** One list page. */
export type ListRequest = Selectors & {
  /** `'0'`: any state the watch cache has; a version: the cache's state not older than it; absent: a consistent read. */
  resourceVersion?: string;
  /** The page after the one whose answer carried this token. */
  continue?: string;
  /** Items per page (a consistent read; the watch cache ignores it). */
  limit?: number;
};

/** One watch stream. */
export type WatchRequest = Selectors & {
  /** From this version on; with `sendInitialEvents`, `''` asks for the current state. */
  resourceVersion?: string | undefined;
  allowWatchBookmarks?: boolean;
  /** A streaming list (KEP-3157): the state as ADDED events, then its initial-events-end bookmark, then live events. */
  sendInitialEvents?: boolean;
  resourceVersionMatch?: 'NotOlderThan';
  /** The server ends the stream after this long (a normal end). */
  timeoutSeconds?: number;
};

/** Ends an open watch; its `done` is then not called. */
export interface WatchHandle {
  abort(): void;
}

export interface ListerWatcher {
  /** What is listed and watched (the collection path), for messages. */
  readonly what: string;
  /**
   * One page: each item handed to `onItem` as it is read, in order; resolves with the page's
   * resourceVersion and continue token. A refused request rejects with its `statusCode`.
   */
  list(request: ListRequest, onItem: (raw: unknown) => void): Promise<ListMetadata>;
  /**
   * Opens one watch: `onEvent` for each event (`type`, its object), `onDone` once when the
   * stream ends (`null`: the server ended it normally; else the error, a refused request
   * carrying its `statusCode`).
   */
  watch(request: WatchRequest, onEvent: (type: string, raw: unknown) => void, onDone: (error: unknown) => void): Promise<WatchHandle>;
}
