/**
 * A token bucket on a caller's clock (no timers, no I/O): `burst` tokens at most, refilled at
 * `perSecond`. What the agent spends on questions it asks the API server on every node at once
 * (one GET per pod that left its slices while serving: a Service deleted on 5,000 nodes would
 * otherwise be 5,000 GETs per endpoint in the same second).
 */
export interface TokenBucketOptions {
  burst: number;
  perSecond: number;
}

export class TokenBucket {
  private tokens: number;
  private at: number | undefined;

  constructor(private readonly options: TokenBucketOptions) {
    if (!(options.burst >= 0) || !(options.perSecond >= 0)) throw new Error(`token bucket: burst and perSecond must be >= 0 (got ${options.burst}, ${options.perSecond})`);
    this.tokens = options.burst;
  }

  /** Takes one token at `nowMs` if there is one. A clock that steps back refills nothing. */
  take(nowMs: number): boolean {
    const { burst, perSecond } = this.options;
    if (this.at !== undefined && nowMs > this.at) this.tokens = Math.min(burst, this.tokens + ((nowMs - this.at) / 1000) * perSecond);
    if (this.at === undefined || nowMs > this.at) this.at = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
