/**
 * Ghost cleanup, on every node: when a pod is gone, the conntrack entries pointing at its IPs
 * (reply source = pod IP: DNATed service traffic; original destination = pod IP: direct and
 * IPIP/DSR traffic) are deleted, TCP/UDP/SCTP/IPIP (and IPv6-in-IP), both families, in ONE
 * table pass for every pod that went within `windowMs`.
 *
 * Just before the pass every IP is checked against the watch cache: an IP a live pod holds
 * again (reuse) is skipped, logged and counted, never flushed. A failed pass is counted and
 * retried with backoff (doubling to 30 s); nothing here throws.
 */
import type { Logger } from 'pino';
import type { ConntrackApi, ConntrackProtocol, DeleteConntrackResult } from 'netlink-native/types';
import type { Clock, TimerHandle } from '../../time/clock.js';

/** Every protocol a pod's traffic can be tracked under; `ipv6` is IPv6-in-IP encapsulation. */
export const FLUSH_PROTOCOLS: ConntrackProtocol[] = ['tcp', 'udp', 'sctp', 'ipip', 'ipv6'];

export interface GoneRequest {
  uid: string;
  key: string;
  ips: readonly string[];
}

export interface FlushReport {
  pods: GoneRequest[];
  addresses: string[];
  result: DeleteConntrackResult;
}

export interface GhostCleanupHooks {
  /** The pod's entries are gone (or it had nothing left to flush): state `flushed`. */
  flushed(uid: string, report: FlushReport): void;
  /** An IP that a live pod holds again: never flushed. */
  reuseSkipped?(pod: GoneRequest, ip: string, holder: string): void;
  passDone?(report: FlushReport): void;
  passFailed?(error: unknown): void;
}

export interface GhostCleanupOptions {
  conntrack: ConntrackApi;
  clock: Clock;
  windowMs: number;
  logger: Logger;
  /** The live pod (namespace/name) holding `ip`, or undefined. */
  liveHolder: (ip: string, goneUid: string) => string | undefined;
  hooks: GhostCleanupHooks;
  maxBackoffMs?: number;
}

const RETRY_START_MS = 500;

export class GhostCleanup {
  private readonly pending = new Map<string, GoneRequest>();
  private readonly inFlight = new Set<string>();
  private readonly skipped = new Set<string>();
  private timer: TimerHandle | undefined;
  private retryMs = RETRY_START_MS;
  private stopped = false;

  constructor(private readonly options: GhostCleanupOptions) {}

  /** Asks for a pod's flush; repeats while pending or running are ignored. */
  request(pod: GoneRequest): void {
    if (this.stopped || this.pending.has(pod.uid) || this.inFlight.has(pod.uid)) return;
    this.pending.set(pod.uid, { uid: pod.uid, key: pod.key, ips: [...pod.ips] });
    this.arm(this.options.windowMs);
  }

  /** Reuse warnings remembered (one per pod and IP until that pod's flush is done): tests. */
  get warnedReuses(): number {
    return this.skipped.size;
  }

  get waiting(): number {
    return this.pending.size + this.inFlight.size;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(delayMs: number): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, delayMs);
  }

  /** One pass over the table for every pending pod. Never rejects. */
  private async pass(): Promise<void> {
    if (this.inFlight.size > 0 || this.pending.size === 0) return;
    const pods = [...this.pending.values()];
    this.pending.clear();
    for (const p of pods) this.inFlight.add(p.uid);
    const { conntrack, logger, hooks } = this.options;
    const liveHolder = (ip: string, uid: string): string | undefined => this.options.liveHolder(ip, uid);
    const addresses = new Set<string>();
    for (const pod of pods) {
      for (const ip of pod.ips) {
        const holder = liveHolder(ip, pod.uid);
        if (holder === undefined) {
          addresses.add(ip);
          continue;
        }
        const skipKey = `${pod.uid}/${ip}`;
        if (!this.skipped.has(skipKey)) {
          this.skipped.add(skipKey);
          logger.warn({ pod: pod.key, ip, holder }, 'ghost cleanup: IP reused by a live pod; its entries are NOT flushed');
          hooks.reuseSkipped?.(pod, ip, holder);
        }
      }
    }
    const list = [...addresses];
    try {
      const result: DeleteConntrackResult = list.length === 0
        ? { scanned: 0, matched: 0, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 }
        : await conntrack.deleteConntrack({ addresses: list, match: ['replySrc', 'origDst'], protocols: FLUSH_PROTOCOLS });
      if (result.failed > 0) throw new Error(`${result.failed} of ${result.matched} conntrack deletes failed`);
      const report: FlushReport = { pods, addresses: list, result };
      for (const pod of pods) {
        logger.info({ pod: pod.key, ips: pod.ips, flushedIps: pod.ips.filter((ip) => addresses.has(ip)), deleted: result.deleted, alreadyGone: result.alreadyGone, pods: pods.length, ms: Math.round(result.ms) }, 'ghost cleanup: conntrack entries of the gone pod deleted');
        hooks.flushed(pod.uid, report);
      }
      hooks.passDone?.(report);
      this.retryMs = RETRY_START_MS;
      for (const p of pods) {
        this.inFlight.delete(p.uid);
        for (const ip of p.ips) this.skipped.delete(`${p.uid}/${ip}`); // the pod is done: its warnings need no memory
      }
    } catch (error) {
      for (const p of pods) {
        this.inFlight.delete(p.uid);
        if (!this.pending.has(p.uid)) this.pending.set(p.uid, p);
      }
      const delay = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, this.options.maxBackoffMs ?? 30_000);
      for (const p of pods) logger.error({ err: error, pod: p.key, ips: p.ips, retryInMs: delay }, 'ghost cleanup failed; retrying');
      hooks.passFailed?.(error);
      this.arm(delay);
      return;
    }
    if (this.pending.size > 0) this.arm(this.options.windowMs);
  }
}
