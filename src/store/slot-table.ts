/**
 * key -> the store slots holding it, as one open-addressing hash table in an Int32Array
 * (linear probing): 4 bytes a position at a load of at most 0.7, against ~48 bytes an entry
 * for a JS Map at 150,000 keys (its table is also one more large array the garbage collector
 * walks). The keys themselves are not stored: the table keeps slots, `matches(slot, key)`
 * says whether a slot holds a key now, so a probe compares keys through the store's own
 * columns (packed ones too: id-column.ts), and `hashAt(slot)` rehashes from them.
 *
 * A key may be held by several slots (an IP reused while the old pod is still known, a
 * duplicated drain id): each is its own entry. `slots(key)` lists them in the order given by
 * `orderOf(slot)` (the store's insertion counter), so the answer does not depend on where the
 * probe found them. Deleted entries leave tombstones; the table is rebuilt when live entries
 * plus tombstones pass the load limit.
 */
const EMPTY = 0;
const TOMBSTONE = -1;
const MAX_LOAD = 0.7;
const REBUILT_LOAD = 0.6;

export interface SlotTableKeys<K> {
  hash(key: K): number;
  /** `hash` of the key slot `slot` holds now. */
  hashAt(slot: number): number;
  /** Whether slot `slot` holds `key` now. */
  matches(slot: number, key: K): boolean;
  /** The order slots were added in (smaller first). */
  orderOf(slot: number): number;
}

/** FNV-1a over a string's UTF-16 code units. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** A 32-bit integer, mixed (Fibonacci hashing with a final xorshift). */
export function hashInt(n: number): number {
  const h = Math.imul(n | 0, 0x9e3779b1);
  return (h ^ (h >>> 15)) | 0;
}

export class SlotTable<K> {
  /** slot + 1 per position; EMPTY or TOMBSTONE otherwise. */
  private table = new Int32Array(16);
  private mask = 15;
  private live = 0;
  private tombstones = 0;

  constructor(private readonly keys: SlotTableKeys<K>) {}

  get size(): number {
    return this.live;
  }

  /** Bytes of the table (metrics, the bench). */
  get bytes(): number {
    return this.table.byteLength;
  }

  /** Adds `slot` under `key` (which the slot must already hold). */
  add(key: K, slot: number): void {
    if ((this.live + this.tombstones + 1) > this.table.length * MAX_LOAD) this.rebuild(this.live + 1);
    this.place(this.keys.hash(key), slot);
    this.live += 1;
  }

  /** Adds `slot` under the key it holds now (`hashAt`): no key to build when the store has the slot already. */
  addSlot(slot: number): void {
    if ((this.live + this.tombstones + 1) > this.table.length * MAX_LOAD) this.rebuild(this.live + 1);
    this.place(this.keys.hashAt(slot), slot);
    this.live += 1;
  }

  /** Removes `slot` from under `key` (call before the slot's key changes). */
  delete(key: K, slot: number): void {
    const target = slot + 1;
    for (let i = this.keys.hash(key) & this.mask; ; i = (i + 1) & this.mask) {
      const at = this.table[i] as number;
      if (at === EMPTY) return;
      if (at === target) {
        this.table[i] = TOMBSTONE;
        this.live -= 1;
        this.tombstones += 1;
        return;
      }
    }
  }

  /** The slots holding `key`, in insertion order (into `out` when given: its contents are replaced). */
  slots(key: K, out: number[] = []): number[] {
    out.length = 0;
    for (let i = this.keys.hash(key) & this.mask; ; i = (i + 1) & this.mask) {
      const at = this.table[i] as number;
      if (at === EMPTY) break;
      if (at !== TOMBSTONE && this.keys.matches(at - 1, key)) out.push(at - 1);
    }
    if (out.length > 1) out.sort((a, b) => this.keys.orderOf(a) - this.keys.orderOf(b));
    return out;
  }

  /** A slot holding `key`: the only one for a unique key; for a shared key, one of them (the same until the table changes; not the earliest added after a rebuild). */
  first(key: K): number | undefined {
    for (let i = this.keys.hash(key) & this.mask; ; i = (i + 1) & this.mask) {
      const at = this.table[i] as number;
      if (at === EMPTY) return undefined;
      if (at !== TOMBSTONE && this.keys.matches(at - 1, key)) return at - 1;
    }
  }

  private place(hash: number, slot: number): void {
    let i = hash & this.mask;
    while (this.table[i] !== EMPTY) i = (i + 1) & this.mask;
    this.table[i] = slot + 1;
  }

  /**
   * A table for `need` live entries, without tombstones, at a load of at most REBUILT_LOAD:
   * a table full of live entries doubles; one full of tombstones is rebuilt at its size.
   */
  private rebuild(need: number): void {
    let size = 16;
    while (size * REBUILT_LOAD < need) size *= 2;
    const old = this.table;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    this.tombstones = 0;
    for (const at of old) if (at > 0) this.place(this.keys.hashAt(at - 1), at - 1);
  }
}
