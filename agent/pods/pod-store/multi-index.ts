/**
 * key -> slots holding it, in the order they were added (a slot appears once per key). Most
 * keys have one slot: that is stored as the number itself, an array only while two or more
 * pods share a key (an IP reused while the old pod is still known, a duplicated drain id).
 */
export class MultiIndex<K> {
  private readonly map = new Map<K, number | number[]>();

  get size(): number {
    return this.map.size;
  }

  add(key: K, slot: number): void {
    const at = this.map.get(key);
    if (at === undefined) this.map.set(key, slot);
    else if (typeof at === 'number') this.map.set(key, [at, slot]);
    else at.push(slot);
  }

  delete(key: K, slot: number): void {
    const at = this.map.get(key);
    if (at === undefined) return;
    if (typeof at === 'number') {
      if (at === slot) this.map.delete(key);
      return;
    }
    const i = at.indexOf(slot);
    if (i >= 0) at.splice(i, 1);
    if (at.length === 1) this.map.set(key, at[0] as number);
  }

  /** The slots of `key`, oldest first. */
  slots(key: K): readonly number[] {
    const at = this.map.get(key);
    if (at === undefined) return [];
    return typeof at === 'number' ? [at] : at;
  }
}
