/**
 * Whether a list/watch takes its next initial state from a streaming list (watch-list.ts),
 * and when `auto` gives streaming lists up for the rest of the process life: at once when the
 * server refused one (an answer, not a fault), or after WATCH_LIST_MAX_FAILURES attempts in a
 * row that failed before their end marker.
 */
import { refusalOf, WATCH_LIST_MAX_FAILURES, type WatchListMode } from './watch-list.js';

/** `auto` gave streaming lists up: why, and whether it was a refusal (list at once) or failures (list after the backoff). */
export interface WatchListGivenUp {
  why: string;
  refused: boolean;
}

export class WatchListChoice {
  private refused = false;
  /** Streaming-list attempts in a row that ended before their initial-events-end bookmark. */
  private failures = 0;

  constructor(private readonly mode: WatchListMode) {}

  get streaming(): boolean {
    return this.mode === 'on' || (this.mode === 'auto' && !this.refused);
  }

  /** A streaming list reached its end marker. */
  succeeded(): void {
    this.failures = 0;
  }

  /** A streaming list failed before its end marker: undefined to stream again, else `auto` lists from now on. */
  failed(error: unknown): WatchListGivenUp | undefined {
    this.failures += 1;
    if (this.mode !== 'auto') return undefined;
    const refusal = refusalOf(error);
    if (refusal === undefined && this.failures < WATCH_LIST_MAX_FAILURES) return undefined;
    this.refused = true;
    if (refusal !== undefined) return { why: refusal.why, refused: true };
    return { why: `${this.failures} streaming lists in a row failed (last: ${error instanceof Error ? error.message : String(error)})`, refused: false };
  }
}
