/**
 * Strings (or values keyed by a string) shared by many pods, stored once: namespaces, node
 * names, drain settings. Reference counted, so a value no pod uses any more is dropped and
 * its id reused (churn does not grow the table).
 */
export class Interner<T> {
  private readonly ids = new Map<string, number>();
  private readonly keys: Array<string | undefined> = [];
  private readonly values: Array<T | undefined> = [];
  private readonly refs: number[] = [];
  private readonly free: number[] = [];

  constructor(private readonly make: (key: string) => T) {}

  get size(): number {
    return this.ids.size;
  }

  /** The id of `key` (one more reference). */
  acquire(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.free.pop() ?? this.keys.length;
      this.ids.set(key, id);
      this.keys[id] = key;
      this.values[id] = this.make(key);
      this.refs[id] = 0;
    }
    this.refs[id] = (this.refs[id] ?? 0) + 1;
    return id;
  }

  release(id: number): void {
    const left = (this.refs[id] ?? 0) - 1;
    this.refs[id] = left;
    if (left > 0) return;
    const key = this.keys[id];
    if (key !== undefined) this.ids.delete(key);
    this.keys[id] = undefined;
    this.values[id] = undefined;
    this.free.push(id);
  }

  value(id: number): T {
    return this.values[id] as T;
  }
}
