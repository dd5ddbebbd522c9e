/** A set that remembers the last `capacity` keys added (older ones are forgotten first). */
export class RecentSet {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity: number) {}

  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next();
      if (oldest.done !== true) this.keys.delete(oldest.value);
    }
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }
}
