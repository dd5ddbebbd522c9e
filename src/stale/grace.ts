/**
 * Remembers when each entry was first seen stale, so only entries stale for longer than the
 * grace are deleted: an endpoint that is still propagating (a new pod's slice arriving after
 * its first packets were DNAT'ed) never loses its traffic.
 *
 * `observe` takes the complete set of currently stale keys: anything not in it (owned again,
 * a live pod's IP again, or expired) is forgotten at once, so a later stale spell starts its
 * grace anew. The clock is injected (milliseconds).
 */
export class GraceTracker {
  private readonly firstSeen = new Map<string, number>();

  constructor(private readonly graceMs: number) {}

  observe(staleKeys: Iterable<string>, nowMs: number): { deletable: Set<string>; waiting: number } {
    const current = new Set(staleKeys);
    for (const key of [...this.firstSeen.keys()]) if (!current.has(key)) this.firstSeen.delete(key);
    const deletable = new Set<string>();
    let waiting = 0;
    for (const key of current) {
      const since = this.firstSeen.get(key);
      if (since === undefined) {
        this.firstSeen.set(key, nowMs);
        waiting++;
      } else if (nowMs - since > this.graceMs) {
        deletable.add(key);
      } else {
        waiting++;
      }
    }
    return { deletable, waiting };
  }

  /** Forgets one entry (owned again, or deleted). */
  forget(key: string): void {
    this.firstSeen.delete(key);
  }

  /** When the entry was first seen stale, if it is being tracked. */
  staleSince(key: string): number | undefined {
    return this.firstSeen.get(key);
  }

  get size(): number {
    return this.firstSeen.size;
  }
}
