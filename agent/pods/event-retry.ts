/**
 * Writes Kubernetes Events until the API answers: a write that fails with a network error, a
 * 5xx or a 429 is retried after a jittered exponential backoff (an API server restart must not
 * lose a DrainInterrupted Warning); one refused for good (another 4xx) is logged and dropped.
 * The queue is bounded: past `capacity` waiting events the oldest is dropped and counted, so an
 * API that never comes back costs a fixed amount of memory. Retries run one at a time.
 */
import type { Clock, TimerHandle } from '../../time/clock.js';
import { JitteredBackoff } from '../../kube/backoff.js';

export interface EventWrite {
  /** For logs: the pod and the reason. */
  what: string;
  send(): Promise<unknown>;
}

export interface EventRetryOptions {
  clock: Clock;
  capacity: number;
  initialMs: number;
  maxMs: number;
  /** A write gave up for good (refused) or was dropped from a full queue. */
  dropped(write: EventWrite, why: 'refused' | 'overflow', error: unknown): void;
  /** A write failed and waits for a retry. */
  retrying?(write: EventWrite, error: unknown, delayMs: number): void;
  random?: () => number;
}

/** Whether a failed request is worth another try: no status (network), 5xx, 429. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof code !== 'number') return true;
  return code >= 500 || code === 429;
}

export class EventRetryQueue {
  private readonly waiting: EventWrite[] = [];
  private readonly backoff: JitteredBackoff;
  private timer: TimerHandle | undefined;
  private running = false;
  private stopped = false;

  constructor(private readonly options: EventRetryOptions) {
    this.backoff = new JitteredBackoff({ initialMs: options.initialMs, maxMs: options.maxMs, resetAfterMs: options.maxMs * 2, jitter: 1, now: () => options.clock.now(), random: options.random });
  }

  get size(): number {
    return this.waiting.length;
  }

  /** A write that failed once: queued for a retry (or dropped when refused for good). */
  failed(write: EventWrite, error: unknown): void {
    if (this.stopped) return;
    if (!isRetryable(error)) {
      this.options.dropped(write, 'refused', error);
      return;
    }
    if (this.waiting.length >= this.options.capacity) {
      const oldest = this.waiting.shift();
      if (oldest !== undefined) this.options.dropped(oldest, 'overflow', error);
    }
    this.waiting.push(write);
    this.arm(error);
  }

  /** Stops retrying; what still waits is returned (the caller logs it). */
  stop(): EventWrite[] {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    return this.waiting.splice(0);
  }

  private arm(error: unknown): void {
    if (this.timer !== undefined || this.running || this.stopped) return;
    const delay = this.backoff.next();
    const head = this.waiting[0];
    if (head !== undefined) this.options.retrying?.(head, error, delay);
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delay);
  }

  /** Sends the waiting writes in order until one fails (then backs off) or none is left. */
  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (!this.stopped) {
        const write = this.waiting[0];
        if (write === undefined) return;
        try {
          await write.send();
          this.waiting.shift();
        } catch (error) {
          if (this.stopped) return;
          if (!isRetryable(error)) {
            this.waiting.shift();
            this.options.dropped(write, 'refused', error);
            continue;
          }
          this.running = false;
          this.arm(error);
          return;
        }
      }
    } finally {
      this.running = false;
    }
  }
}
