/**
 * The held servers by id (service > server), and when each was held: a scan's view of a server
 * held after the scan began is older than the edit that held it (`heldAfter`).
 */
import { heldId, type HeldServer } from './held-server.js';

export class HoldRegistry {
  private readonly holds = new Map<string, HeldServer>();
  /** Pod uid -> the ids of its held servers: a release or a "held already?" costs that pod, not every hold. */
  private readonly byPod = new Map<string, Set<string>>();
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
    const before = this.holds.get(id);
    if (before !== undefined && before.podUid !== held.podUid) this.unindex(id, before.podUid);
    this.holds.set(id, held);
    let ids = this.byPod.get(held.podUid);
    if (ids === undefined) this.byPod.set(held.podUid, (ids = new Set()));
    ids.add(id);
  }

  delete(id: string): void {
    const held = this.holds.get(id);
    if (held === undefined) return;
    this.holds.delete(id);
    this.unindex(id, held.podUid);
  }

  /** Whether `uid` has a held server. */
  holdsPod(uid: string): boolean {
    return this.byPod.has(uid);
  }

  /** The pods with a held server, as a copy (the caller may release while it walks them). */
  podUidList(): string[] {
    return [...this.byPod.keys()];
  }

  /** The held servers of one pod, as a copy of their entries (the caller may delete while it walks them). */
  entriesOf(uid: string): Array<[string, HeldServer]> {
    const ids = this.byPod.get(uid);
    if (ids === undefined) return [];
    const out: Array<[string, HeldServer]> = [];
    for (const id of ids) {
      const held = this.holds.get(id);
      if (held !== undefined) out.push([id, held]);
    }
    return out;
  }

  /** Resumes holds from the state file (before the first sync). */
  resume(held: readonly HeldServer[]): void {
    for (const h of held) this.set(heldId(h.service, h.destination), { ...h });
  }

  private unindex(id: string, uid: string): void {
    const ids = this.byPod.get(uid);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.byPod.delete(uid);
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
        this.set(id, { ...h });
        changed += 1;
      } else if (mine.originalAssumed === true && h.originalAssumed !== true) {
        this.set(id, { ...mine, originalWeight: h.originalWeight, spec: h.spec, originalAssumed: false, recreated: mine.recreated || h.recreated, serviceOrder: mine.serviceOrder ?? h.serviceOrder });
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
