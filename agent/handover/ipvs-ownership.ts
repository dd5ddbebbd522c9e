/**
 * Which agent instance edits IPVS while two overlap on a node (docs/handover.md): exactly one.
 * A newer instance that follows older ones edits nothing until each has handed its holds
 * over (`holds` in answer to `take`, or `bye`), is gone, or let the bounded wait run out. An
 * instance that handed its holds over edits nothing until that newer instance goes away
 * again. So a held server is restored once, by one instance, to the original weight the
 * instance that first held it saw.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../time/clock.js';

/** How long a newer instance waits for an older one's holds after asking (an older one that never answers). */
export const HOLDS_WAIT_MS = 5000;

export interface IpvsOwnershipOptions {
  clock: Clock;
  logger: Logger;
  /** This instance edits IPVS from now on (it was waiting, or had handed it over). */
  gained: () => void;
  waitMs?: number;
}

export class IpvsOwnership {
  /** Older instances whose holds this one waits for, with the bounded wait once asked. */
  private readonly waiting = new Map<string, TimerHandle | undefined>();
  /** The newer instance this one handed IPVS over to. */
  private handedTo: string | undefined;

  constructor(private readonly options: IpvsOwnershipOptions) {}

  /** This instance may edit IPVS now. */
  get owns(): boolean {
    return this.waiting.size === 0 && this.handedTo === undefined;
  }

  /** Following the older instance `holder`: no IPVS edits until it has handed over (or is gone). */
  expect(holder: string): void {
    if (!this.waiting.has(holder)) this.waiting.set(holder, undefined);
  }

  /** `take` was sent to `holder`: its holds are awaited for a bounded time. */
  asked(holder: string): void {
    if (!this.waiting.has(holder) || this.waiting.get(holder) !== undefined) return;
    const waitMs = this.options.waitMs ?? HOLDS_WAIT_MS;
    this.waiting.set(holder, this.options.clock.setTimeout(() => {
      this.options.logger.warn({ from: holder, waitedMs: waitMs }, 'handover: the older agent instance did not hand its IPVS holds over in time; editing IPVS anyway');
      this.settled(holder);
    }, waitMs));
  }

  /** `holder` handed its holds over, or is gone. */
  settled(holder: string): void {
    if (!this.waiting.has(holder)) return;
    const before = this.owns;
    this.waiting.get(holder)?.cancel();
    this.waiting.delete(holder);
    if (!before && this.owns) this.options.gained();
  }

  /** A newer instance took IPVS over. */
  handOver(to: string): void {
    this.handedTo = to;
  }

  /** The newer instance went away before this one exited: this one edits IPVS again. */
  reclaim(): void {
    if (this.handedTo === undefined) return;
    const before = this.owns;
    this.handedTo = undefined;
    if (!before && this.owns) this.options.gained();
  }

  close(): void {
    for (const timer of this.waiting.values()) timer?.cancel();
    this.waiting.clear();
  }
}
