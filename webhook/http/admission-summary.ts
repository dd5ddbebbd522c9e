import type { Logger } from '../../log/logger.js';

/**
 * One info line per interval instead of one per pod: counts of the admissions answered in
 * that interval by result and reason (each admission is still logged at debug, and counted
 * in conndrain_webhook_admissions_total). Silent when nothing happened.
 */
export class AdmissionSummary {
  private counts = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly logger: Logger;
  private readonly intervalMs: number;

  constructor(logger: Logger, intervalMs: number) {
    this.logger = logger;
    this.intervalMs = intervalMs;
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  add(result: string, reason: string): void {
    const key = `${result}/${reason}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** Logs and resets the counts (also called once at shutdown). */
  flush(): void {
    if (this.counts.size === 0) return;
    const admissions = Object.fromEntries(this.counts);
    const total = [...this.counts.values()].reduce((a, b) => a + b, 0);
    this.counts = new Map();
    this.logger.info({ total, admissions, intervalMs: this.intervalMs }, 'admissions answered since the last summary');
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
