/**
 * The JavaScript end of a streamed scan (ct_scan with onBatch): decodes each batch the addon
 * queues while the dump pass runs, hands it to the caller's onEntries, and knows when every
 * batch of the final pass has arrived (threadsafe-function calls may land after the op's
 * promise settles). An exception from onEntries is kept and thrown once the scan is over, so
 * the addon's callback never sees one.
 */
import { decodeEntryRecords } from './conntrack-records.js';
import type { ConntrackEntry } from './types.js';

export class ScanBatchReceiver {
  private readonly delivered = new Map<number, number>();
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly onEntries: (entries: ConntrackEntry[], pass: number) => void) {}

  /** The addon's onBatch. */
  readonly onBatch = (records: ArrayBuffer, pass: number): void => {
    this.delivered.set(pass, (this.delivered.get(pass) ?? 0) + 1);
    this.deliver(records, pass);
    this.wake?.();
  };

  /** Waits for `batches` batches of `pass`, hands over the rest (`records`), and throws what onEntries threw. */
  async finish(pass: number, batches: number, records: ArrayBuffer): Promise<void> {
    while ((this.delivered.get(pass) ?? 0) < batches) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    this.wake = undefined;
    this.deliver(records, pass);
    if (this.failure !== undefined) throw this.failure.error;
  }

  private deliver(records: ArrayBuffer, pass: number): void {
    if (this.failure !== undefined) return;
    try {
      const entries = decodeEntryRecords(records);
      if (entries.length > 0) this.onEntries(entries, pass);
    } catch (error) {
      this.failure = { error };
    }
  }
}
