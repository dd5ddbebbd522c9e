/**
 * The watch's retry delay, as client-go's reflector paces ListAndWatch: exponential from
 * `initialMs` to `maxMs`, each delay stretched by a random factor in [1, 1 + jitter) so 5,000
 * agents that lost their watches together do not come back together, and reset only after a
 * stable period (`resetAfterMs` without a failure), not on the first success: a server that
 * answers the list and then fails every watch (410 Gone again and again) must not be
 * relisted in a hot loop.
 *
 * `immediate` failures (a 410 Gone: the resourceVersion is too old, a relist is the cure) get
 * no wait the first time in a stable period, then the same growing delay as errors.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
  /** 1.0 as client-go's reflector: a delay d becomes d..2d. */
  jitter: number;
  now: () => number;
  random?: () => number;
}

export class JitteredBackoff {
  private failures = 0;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: BackoffOptions) {}

  /** Failures counted in the current unstable period. */
  get count(): number {
    return this.failures;
  }

  /** The delay before the next attempt after one more failure. */
  next(immediate = false): number {
    const { initialMs, maxMs, resetAfterMs, jitter, now, random = Math.random } = this.options;
    const at = now();
    if (at - this.lastFailureAt >= resetAfterMs) this.failures = 0;
    this.lastFailureAt = at;
    const n = this.failures++;
    if (immediate && n === 0) return 0;
    const step = immediate ? n - 1 : n;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(step, 30));
    return Math.round(Math.min(maxMs, base * (1 + jitter * random())));
  }
}
