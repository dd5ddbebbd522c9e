/**
 * Open drain sessions that a live older agent instance on the node holds (drain id ->
 * record): kept in the state file, handed to this instance when a drain call for one arrives
 * here, when the older instance says bye, or when it dies.
 */
import type { SessionRecord } from '../runtime/state-file.js';

export class ForeignSessions {
  private readonly records = new Map<string, SessionRecord>();

  set(record: SessionRecord): void {
    this.records.set(record.drainId, record);
  }

  /** Removes and returns the record of `drainId` (a call for it arrived here). */
  take(drainId: string): SessionRecord | undefined {
    const rec = this.records.get(drainId);
    if (rec !== undefined) this.records.delete(drainId);
    return rec;
  }

  /** Removes and returns every record `holder` holds. */
  dropHolder(holder: string): SessionRecord[] {
    const mine = [...this.records.values()].filter((r) => r.holder === holder);
    for (const r of mine) this.records.delete(r.drainId);
    return mine;
  }

  list(): SessionRecord[] {
    return [...this.records.values()];
  }
}
