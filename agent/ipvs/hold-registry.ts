/**
 * The held servers by id (service > server), and when each was held: a scan's view of a server
 * held after the scan began is older than the edit that held it (`heldAfter`).
 */
import { heldId, type HeldServer } from './held-server.js';

export class HoldRegistry {
  private readonly holds = new Map<string, HeldServer>();
  /** Counts scans and edits: a hold made after a scan began (`heldAt` > the scan's) is newer than the scan. */
  private seq = 0;
  private readonly heldAt = new WeakMap<HeldServer, number>();

  get size(): number {
    return this.holds.size;
  }

  list(): HeldServer[] {
    return [...this.holds.values()];
  }

  values(): IterableIterator<HeldServer> {
    return this.holds.values();
  }

  /** A copy of the entries: the caller may delete while it walks them. */
  entries(): Array<[string, HeldServer]> {
    return [...this.holds];
  }

  get(id: string): HeldServer | undefined {
    return this.holds.get(id);
  }

  has(id: string): boolean {
    return this.holds.has(id);
  }

  set(id: string, held: HeldServer): void {
    this.holds.set(id, held);
  }

  delete(id: string): void {
    this.holds.delete(id);
  }

  /** The pods with a held server. */
  podUids(): Set<string> {
    const uids = new Set<string>();
    for (const h of this.holds.values()) uids.add(h.podUid);
    return uids;
  }

  /** Resumes holds from the state file (before the first sync). */
  resume(held: readonly HeldServer[]): void {
    for (const h of held) this.holds.set(heldId(h.service, h.destination), { ...h });
  }

  /**
   * Merges holds another agent instance handed over (docs/handover.md): a server not held here
   * is held as it says; one held here keeps its hold, with the original weight the other saw
   * when this one only assumed it (first seen at 0). Returns how many holds it added or changed.
   */
  adopt(held: readonly HeldServer[]): number {
    let changed = 0;
    for (const h of held) {
      const id = heldId(h.service, h.destination);
      const mine = this.holds.get(id);
      if (mine === undefined) {
        this.holds.set(id, { ...h });
        changed += 1;
      } else if (mine.originalAssumed === true && h.originalAssumed !== true) {
        this.holds.set(id, { ...mine, originalWeight: h.originalWeight, spec: h.spec, originalAssumed: false, recreated: mine.recreated || h.recreated, serviceOrder: mine.serviceOrder ?? h.serviceOrder });
        changed += 1;
      }
    }
    return changed;
  }

  /** A scan begins: its number, for heldAfter. */
  beginScan(): number {
    return ++this.seq;
  }

  /** `held` was edited to 0 just now (newer than every scan begun so far). */
  markHeld(held: HeldServer): void {
    this.heldAt.set(held, ++this.seq);
  }

  /** Whether `held` was held after the scan numbered `scanSeq` began. */
  heldAfter(held: HeldServer, scanSeq: number): boolean {
    return (this.heldAt.get(held) ?? 0) > scanSeq;
  }
}
