/**
 * What the list/watch (list-watch.ts) applies to its handler, written once for lists, watch
 * events and a streaming list's initial events: each object projected, keyed and upserted (or
 * removed), and after a complete state (a relist, the end of a streaming list's initial
 * events) every held key that state did not carry removed, as client-go's Replace does.
 */
import type { ListWatchHandlers } from './list-watch.js';

export class ListWatchStore<T> {
  /** The keys applied, when the handler does not say (`keys`). */
  private readonly known: Set<string> | undefined;

  constructor(
    private readonly project: (raw: unknown) => T,
    private readonly keyOf: (obj: T) => string,
    private readonly handlers: ListWatchHandlers<T>,
  ) {
    this.known = handlers.keys === undefined ? new Set<string>() : undefined;
  }

  /** Projects and upserts one object; a complete state being read notes its key in `seen`. */
  upsert(raw: unknown, seen?: Set<string>): void {
    const obj = this.project(raw);
    const key = this.keyOf(obj);
    seen?.add(key);
    this.known?.add(key);
    this.handlers.upsert(obj);
  }

  /** A DELETED event: `raw` is the object's last state. */
  delete(raw: unknown): void {
    const obj = this.project(raw);
    this.drop(this.keyOf(obj), obj);
  }

  /**
   * A complete state was read: what it did not carry is gone. `seen` undefined: nothing was
   * held when it began (the first sync), so there is nothing to compare.
   */
  removeAbsent(seen: ReadonlySet<string> | undefined): void {
    if (seen === undefined) return;
    for (const key of [...this.heldKeys()]) if (!seen.has(key)) this.drop(key, undefined);
  }

  /** Whether any key is applied yet (only then can a complete state remove something). */
  holdsAny(): boolean {
    return this.heldKeys()[Symbol.iterator]().next().done !== true;
  }

  private drop(key: string, obj: T | undefined): void {
    this.known?.delete(key);
    this.handlers.remove(key, obj);
  }

  /** The keys applied so far: the handler's own (`keys`) or the set kept here. */
  private heldKeys(): Iterable<string> {
    return this.known ?? this.handlers.keys?.() ?? [];
  }
}
