/**
 * "The first complete pod list is in": closed at start-up, opened once by the watch. The drain
 * API holds a call for an id it does not know yet on this gate (bounded by --unknown-id-wait),
 * so a preStop call that reaches a starting agent is answered as usual instead of 404.
 */
import type { Clock, TimerHandle } from '../../time/clock.js';

interface Waiter {
  resolve(opened: boolean): void;
  timer: TimerHandle;
}

export class SyncGate {
  private opened = false;
  private waiters = new Set<Waiter>();

  constructor(private readonly clock: Clock) {}

  get isOpen(): boolean {
    return this.opened;
  }

  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.settleAll(true);
  }

  /** Shutdown: every wait ends now, unopened (no timer outlives the agent). */
  cancel(): void {
    this.settleAll(false);
  }

  /** Resolves true when the gate opens within `timeoutMs`, false otherwise (at once when already open). */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.opened) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: this.clock.setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private settleAll(opened: boolean): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) {
      w.timer.cancel();
      w.resolve(opened);
    }
  }
}
