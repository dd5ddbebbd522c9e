/**
 * Keys due at a time (a binary min-heap): deleting pods whose grace elapses. The agent arms
 * one timer for the earliest deadline instead of scanning every deleting pod each interval.
 * A key may be queued more than once (a pod updated while deleting); re-planning it twice is
 * harmless, and the stale entry leaves the heap when due.
 */
export class DeadlineQueue {
  private readonly at: number[] = [];
  private readonly keys: string[] = [];

  get size(): number {
    return this.at.length;
  }

  /** The earliest deadline, or undefined when empty. */
  get next(): number | undefined {
    return this.at[0];
  }

  push(atMs: number, key: string): void {
    this.at.push(atMs);
    this.keys.push(key);
    let i = this.at.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.at[parent] as number) <= atMs) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** The key of the earliest deadline, or undefined when empty. */
  get nextKey(): string | undefined {
    return this.keys[0];
  }

  /** Drops the earliest deadlines while `stale(key, atMs)` says nothing is due for them any more. */
  dropStale(stale: (key: string, atMs: number) => boolean): void {
    while (this.at.length > 0 && stale(this.keys[0] as string, this.at[0] as number)) this.removeTop();
  }

  /** Removes and returns every key due at or before `nowMs`, earliest first. */
  popDue(nowMs: number): string[] {
    const out: string[] = [];
    while (this.at.length > 0 && (this.at[0] as number) <= nowMs) {
      out.push(this.keys[0] as string);
      this.removeTop();
    }
    return out;
  }

  private removeTop(): void {
    const lastAt = this.at.pop() as number;
    const lastKey = this.keys.pop() as string;
    if (this.at.length === 0) return;
    this.at[0] = lastAt;
    this.keys[0] = lastKey;
    let i = 0;
    const n = this.at.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && (this.at[l] as number) < (this.at[m] as number)) m = l;
      if (r < n && (this.at[r] as number) < (this.at[m] as number)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(a: number, b: number): void {
    [this.at[a], this.at[b]] = [this.at[b] as number, this.at[a] as number];
    [this.keys[a], this.keys[b]] = [this.keys[b] as string, this.keys[a] as string];
  }
}
