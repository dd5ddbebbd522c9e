/** Bytes of request bodies held in memory by all requests together, against a fixed budget. */
export class BodyBudget {
  private held = 0;
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get bytes(): number {
    return this.held;
  }

  /** Takes `n` bytes if they fit; false (nothing taken) if they do not. */
  take(n: number): boolean {
    if (this.held + n > this.limit) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held = Math.max(0, this.held - n);
  }
}
