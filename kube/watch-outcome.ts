/**
 * How one watch stream ended, as the list/watch (list-watch.ts) acts on it: what the stream
 * said along the way (its events, an ERROR event carrying a Status) and how the transport
 * ended it give either a failure to retry (a 410 Gone relists) or a normal end (the server's
 * timeout: watch again from the last resourceVersion).
 */

/** A watch ERROR event's object (a Status). */
export interface WatchStatus {
  code?: number;
  message?: string;
}

/** A watch that ends normally sooner than this, with no event, is retried with backoff (no hot loop). */
export const MIN_WATCH_MS = 1000;

export function statusCode(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export class WatchOutcome {
  private events = 0;
  private gone = false;
  private streamError: Error | undefined;

  constructor(
    /** What is watched (the collection path), for messages. */
    private readonly what: string,
    private readonly startedAtMs: number,
  ) {}

  /** An event other than ERROR was read. */
  counted(): void {
    this.events += 1;
  }

  /** An ERROR event (its object a Status): the stream's end decides (a 410 relists; another code is a failure). */
  errorEvent(raw: unknown): void {
    const status: WatchStatus = raw ?? {};
    if (status.code === 410) this.gone = true;
    else this.streamError = Object.assign(new Error(`watch ${this.what}: ${status.message ?? 'ERROR event'}`), { statusCode: status.code });
  }

  /**
   * The failure the stream ended with, or undefined for a normal end. `error`: what the
   * transport ended it with (`null`: the server ended it); `unfinished`: a streaming list whose
   * initial events had not ended.
   */
  failure(error: unknown, unfinished: boolean, nowMs: number): unknown {
    if (this.gone || statusCode(error) === 410) return Object.assign(new Error('410 Gone'), { statusCode: 410 });
    if (error !== null && error !== undefined) return error;
    if (this.streamError !== undefined) return this.streamError;
    if (unfinished) return new Error(`watch ${this.what}: the streaming list ended before its initial-events-end bookmark`);
    if (this.events === 0 && nowMs - this.startedAtMs < MIN_WATCH_MS) return new Error(`watch ${this.what}: closed at once without an event`);
    return undefined;
  }
}
