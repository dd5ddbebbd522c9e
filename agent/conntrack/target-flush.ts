/**
 * Deletes the conntrack entries of gone endpoints by their slices' targets (address, port,
 * protocol), in one table pass for every endpoint that went within `windowMs`: entries whose
 * reply source is the target (service traffic DNATed to it) or whose original destination is
 * (direct traffic to it). Never by bare address: a host-network endpoint's address is a node's.
 * A target with port 0 (an endpoint resumed from the state file, its ports unknown) matches
 * only entries DNATed to the address.
 *
 * Just before the pass each address is checked again: one that a current endpoint of another
 * pod or a live pod of this node holds (IP reuse) is skipped and counted. Deletes are exact
 * (original tuple, zone and the kernel's id), so nothing but the listed entries is touched. A
 * failed pass is retried with backoff; nothing here throws.
 */
import type { Logger } from 'pino';
import { IPS_DST_NAT, type ConntrackApi, type ConntrackEntry, type ConntrackProtocol } from 'netlink-native/types';
import type { Clock, TimerHandle } from '../../time/clock.js';
import type { EndpointTarget } from '../../src/endpoints/endpoint-index.js';

export interface TargetFlushRequest {
  uid: string;
  key: string;
  targets: readonly EndpointTarget[];
  /** `udp-sctp`: only those protocols (an endpoint that left while serving). */
  scope: 'all' | 'udp-sctp';
}

export interface TargetFlushOptions {
  conntrack: ConntrackApi;
  clock: Clock;
  windowMs: number;
  logger: Logger;
  /** Who holds `address` now other than `uid` (a current endpoint or a live pod of this node), or undefined. */
  holderOf: (address: string, uid: string) => string | undefined;
  hooks: {
    flushed?(request: TargetFlushRequest, deleted: number): void;
    reuseSkipped?(request: TargetFlushRequest, address: string, holder: string): void;
    failed?(error: unknown): void;
  };
}

const PORTED: readonly ConntrackProtocol[] = ['tcp', 'udp', 'sctp'];

function matches(entry: ConntrackEntry, targets: ReadonlyMap<string, TargetFlushRequest>): TargetFlushRequest | undefined {
  const proto = entry.protocol;
  return targets.get(`${proto}/${entry.reply.src}/${entry.reply.srcPort ?? -1}`)
    ?? targets.get(`${proto}/${entry.original.dst}/${entry.original.dstPort ?? -1}`)
    // Port 0 (a state-file record: its ports unknown): only service traffic DNATed to it, never
    // direct traffic to the address, which may be a node's.
    ?? ((entry.status & IPS_DST_NAT) !== 0 ? targets.get(`${proto}/${entry.reply.src}/0`) : undefined);
}

export class TargetFlush {
  private pending: TargetFlushRequest[] = [];
  private timer: TimerHandle | undefined;
  private running = false;
  private retryMs = 500;
  private stopped = false;

  constructor(private readonly options: TargetFlushOptions) {}

  get waiting(): number {
    return this.pending.length;
  }

  request(request: TargetFlushRequest): void {
    if (this.stopped) return;
    this.pending.push(request);
    this.arm(this.options.windowMs);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(delayMs: number): void {
    if (this.timer !== undefined || this.stopped || this.running) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, delayMs);
  }

  private async pass(): Promise<void> {
    if (this.pending.length === 0 || this.stopped) return;
    this.running = true;
    const batch = this.pending;
    this.pending = [];
    const { conntrack, logger, hooks } = this.options;
    const byTarget = new Map<string, TargetFlushRequest>();
    const addresses = new Set<string>();
    const protocols = new Set<ConntrackProtocol>();
    for (const request of batch) {
      const reused = new Set<string>();
      for (const t of request.targets) {
        if (reused.has(t.address)) continue;
        const holder = this.options.holderOf(t.address, request.uid);
        if (holder !== undefined) {
          reused.add(t.address);
          logger.warn({ pod: request.key, ip: t.address, holder }, 'ghost cleanup: endpoint address reused by a live pod; its entries are NOT flushed');
          hooks.reuseSkipped?.(request, t.address, holder);
          continue;
        }
        const protocol = t.protocol as ConntrackProtocol;
        if (!PORTED.includes(protocol) || (request.scope === 'udp-sctp' && protocol === 'tcp')) continue;
        byTarget.set(`${protocol}/${t.address}/${t.port}`, request);
        addresses.add(t.address);
        protocols.add(protocol);
      }
    }
    try {
      const deleted = new Map<TargetFlushRequest, number>();
      if (addresses.size > 0) {
        const entries = await conntrack.listConntrack({ addresses: [...addresses], match: ['replySrc', 'origDst'], protocols: [...protocols] });
        const doomed: ConntrackEntry[] = [];
        for (const e of entries) {
          const owner = matches(e, byTarget);
          if (owner === undefined) continue;
          doomed.push(e);
          deleted.set(owner, (deleted.get(owner) ?? 0) + 1);
        }
        if (doomed.length > 0) {
          const result = await conntrack.deleteConntrackEntries(doomed.map((e) => ({ family: e.family, protocolNumber: e.protocolNumber, original: e.original, zone: e.zone, origZone: e.origZone ?? e.zone, id: e.id })));
          if (result.failed > 0) throw new Error(`${result.failed} of ${doomed.length} conntrack deletes failed`);
        }
      }
      for (const request of batch) {
        const n = deleted.get(request) ?? 0;
        // Every node flushes every gone endpoint: a line at info only where this node had entries of it.
        logger[n > 0 ? 'info' : 'debug']({ pod: request.key, targets: request.targets.length, scope: request.scope, deleted: n, pods: batch.length }, 'ghost cleanup: conntrack entries of the gone endpoint deleted');
        hooks.flushed?.(request, n);
      }
      this.retryMs = 500;
    } catch (error) {
      this.pending = [...batch, ...this.pending];
      logger.error({ err: error, endpoints: batch.length, retryInMs: this.retryMs }, 'ghost cleanup of gone endpoints failed; retrying');
      hooks.failed?.(error);
      this.running = false;
      const delay = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, 30_000);
      this.arm(delay);
      return;
    }
    this.running = false;
    if (this.pending.length > 0) this.arm(this.options.windowMs);
  }
}
