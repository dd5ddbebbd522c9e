/**
 * A fake clock for unit tests: timers run only when the test advances time, in due order,
 * with pending promise callbacks settled between them (so async work triggered by a timer
 * completes before the next one fires).
 */
import type { Clock, TimerHandle } from '../../time/clock.js';

interface Timer {
  id: number;
  due: number;
  every: number | undefined;
  fn: () => void;
}

export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(private current = Date.parse('2026-01-01T00:00:00Z')) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, undefined);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, Math.max(1, ms));
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (next === undefined) break;
      this.current = Math.max(this.current, next.due);
      if (next.every === undefined) this.timers = this.timers.filter((t) => t !== next);
      else next.due += next.every;
      next.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }

  private add(fn: () => void, ms: number, every: number | undefined): TimerHandle {
    const timer: Timer = { id: ++this.seq, due: this.current + Math.max(0, ms), every, fn };
    this.timers.push(timer);
    return { cancel: () => { this.timers = this.timers.filter((t) => t !== timer); } };
  }
}
