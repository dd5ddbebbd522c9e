/**
 * The in-memory stand-in of the event index (ConntrackEventIndex) over a MemoryConntrack: the
 * table's new/update/destroy events play ctnetlink's multicast, the watched-address check plays
 * the kernel-side BPF filter, and a bounded queue plays the socket's receive buffer: a burst of
 * watched events larger than recvBufferBytes / STANDIN_EVENT_BYTES (queued before the "reader"
 * gets to them on the next turn of the event loop) overruns it, exactly like ENOBUFS, and the
 * index turns stale until resync(). The contract suite (native/test/conntrack-events-contract.ts)
 * runs against this and against the kernel.
 */
import { constants } from 'node:os';
import { checkAddresses, checkEventsOptions, concerns, type CheckedEventsOptions } from './conntrack-events-common.js';
import type { MemoryConntrack, MemoryConntrackEvent } from './memory-conntrack.js';
import {
  NetlinkError,
  type ConntrackDeleteIndexedResult,
  type ConntrackEntry,
  type ConntrackEventIndex,
  type ConntrackIndexFlows,
  type ConntrackIndexStats,
  type ConntrackVerifyResult,
} from './types.js';

/** Receive-buffer bytes one queued event takes in the model (about an event skb's truesize). */
export const STANDIN_EVENT_BYTES = 1024;
/** What the stand-in reports as the cost of one indexed flow (the addon reports its own). */
const STANDIN_BYTES_PER_FLOW = 256;

function flowKey(e: ConntrackEntry): string {
  const o = e.original;
  return [e.family, e.protocolNumber, e.origZone ?? e.zone, o.src, o.dst, o.srcPort ?? '', o.dstPort ?? '', o.icmpId ?? '', o.icmpType ?? '', o.icmpCode ?? ''].join('|');
}

export class MemoryConntrackEvents implements ConntrackEventIndex {
  private readonly options: CheckedEventsOptions;
  private readonly unsubscribe: () => void;
  private watched = new Set<string>();
  private readonly flows = new Map<string, ConntrackEntry>();
  private pending: { kind: MemoryConntrackEvent; entry: ConntrackEntry }[] = [];
  private drainScheduled = false;
  private closed = false;
  private resyncing: Promise<void> | undefined;
  private readonly counters = { events: 0, overruns: 0, resyncs: 0, flowsDropped: 0, deletedByIndex: 0, alreadyGone: 0, verifyPasses: 0, verifyDeleted: 0, gets: 0 };
  private stale = false;

  constructor(
    private readonly table: MemoryConntrack,
    options?: Parameters<MemoryConntrack['openConntrackEvents']>[0],
  ) {
    this.options = checkEventsOptions(options);
    this.unsubscribe = table.subscribe((kind, entry) => this.onEvent(kind, entry));
  }

  private get capacity(): number {
    return Math.max(1, Math.floor(this.options.recvBufferBytes / STANDIN_EVENT_BYTES));
  }

  private onEvent(kind: MemoryConntrackEvent, entry: ConntrackEntry): void {
    if (!concerns(entry, this.watched)) return; // the kernel-side filter drops it
    if (this.pending.length >= this.capacity) {
      if (!this.stale) this.counters.overruns++;
      this.stale = true;
      if (this.options.autoResync) void this.backgroundResync();
      return;
    }
    this.pending.push({ kind, entry });
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    this.drainScheduled = false;
    const events = this.pending;
    this.pending = [];
    for (const { kind, entry } of events) {
      this.counters.events++;
      if (!concerns(entry, this.watched)) continue;
      if (kind === 'destroy') this.flows.delete(flowKey(entry));
      else this.put(entry);
    }
  }

  private put(entry: ConntrackEntry): void {
    const key = flowKey(entry);
    if (!this.flows.has(key) && this.flows.size >= this.options.maxFlows) {
      this.counters.flowsDropped++;
      this.stale = true;
      return;
    }
    this.flows.set(key, entry);
  }

  private check(op: string): void {
    if (this.closed) throw new NetlinkError(op, constants.errno.EBADF, 'EBADF', 'the event index is closed');
    this.drain();
  }

  /** Index every table entry concerning `set` (one "dump pass"). */
  private dumpInto(set: ReadonlySet<string>): void {
    for (const entry of this.table.entries()) if (concerns(entry, set)) this.put(entry);
  }

  private of(addresses: string[]): ConntrackEntry[] {
    const set = new Set(addresses);
    return [...this.flows.values()].filter((e) => concerns(e, set));
  }

  setWatchedAddresses(addresses: string[]): Promise<void> {
    return run(() => {
      this.check('setWatchedAddresses');
      const next = new Set(checkAddresses('setWatchedAddresses', addresses));
      const added = new Set([...next].filter((a) => !this.watched.has(a)));
      this.watched = next;
      for (const [key, entry] of this.flows) if (!concerns(entry, next)) this.flows.delete(key);
      if (added.size > 0) this.dumpInto(added);
    });
  }

  flowsOf(addresses: string[]): Promise<ConntrackIndexFlows> {
    return run(() => {
      this.check('flowsOf');
      const wanted = checkAddresses('flowsOf', addresses);
      const fresh = !this.stale && wanted.every((a) => this.watched.has(a));
      const flows: ConntrackEntry[] = [];
      let refreshed = 0;
      for (const entry of this.of(wanted)) {
        if (entry.protocolNumber === 6) {
          flows.push(structuredClone(entry));
          continue;
        }
        this.counters.gets++;
        const now = this.table.getByOriginal(entry.protocolNumber, entry.origZone ?? entry.zone, entry.original);
        if (now === undefined || now.id !== entry.id) {
          this.flows.delete(flowKey(entry));
          continue;
        }
        refreshed++;
        this.flows.set(flowKey(now), now);
        flows.push(structuredClone(now));
      }
      return { fresh, flows, refreshed };
    });
  }

  deleteFlowsOf(addresses: string[]): Promise<ConntrackDeleteIndexedResult> {
    return run(() => {
      this.check('deleteFlowsOf');
      const started = performance.now();
      const wanted = checkAddresses('deleteFlowsOf', addresses);
      const result: ConntrackDeleteIndexedResult = { fresh: !this.stale && wanted.every((a) => this.watched.has(a)), deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 };
      for (const entry of this.of(wanted)) {
        this.flows.delete(flowKey(entry));
        const now = this.table.getByOriginal(entry.protocolNumber, entry.origZone ?? entry.zone, entry.original);
        if (now !== undefined && now.id === entry.id && this.table.expire(now.id)) result.deleted++;
        else result.alreadyGone++;
        result.byProtocol[entry.protocol] = (result.byProtocol[entry.protocol] ?? 0) + 1;
      }
      this.counters.deletedByIndex += result.deleted;
      this.counters.alreadyGone += result.alreadyGone;
      this.drain();
      result.ms = performance.now() - started;
      return result;
    });
  }

  async verify(addresses: string[]): Promise<ConntrackVerifyResult> {
    this.check('verify');
    const wanted = checkAddresses('verify', addresses);
    if (wanted.length === 0) return { deleted: 0, alreadyGone: 0, failed: 0, scanned: 0, ms: 0 };
    const r = await this.table.deleteConntrack({ addresses: wanted, match: ['origDst', 'replySrc'] });
    this.drain();
    this.counters.verifyPasses++;
    this.counters.verifyDeleted += r.deleted;
    return { deleted: r.deleted, alreadyGone: r.alreadyGone, failed: r.failed, scanned: r.scanned, ms: r.ms };
  }

  resync(): Promise<void> {
    return run(() => {
      this.check('resync');
      this.flows.clear();
      this.stale = false;
      this.dumpInto(this.watched);
      this.counters.resyncs++;
    });
  }

  private backgroundResync(): Promise<void> {
    this.resyncing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (this.closed ? undefined : this.resync()))
      .catch(() => undefined)
      .finally(() => (this.resyncing = undefined));
    return this.resyncing;
  }

  stats(): ConntrackIndexStats {
    return {
      ...this.counters,
      watchedAddresses: this.watched.size,
      flows: this.flows.size,
      eventsFilteredOut: 0,
      stale: this.stale,
      bytesPerFlow: STANDIN_BYTES_PER_FLOW,
      indexBytes: this.flows.size * STANDIN_BYTES_PER_FLOW,
      maxFlows: this.options.maxFlows,
      filter: 'bpf',
      filterInstructions: 0,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.flows.clear();
    this.pending = [];
  }
}

/** Runs fn now; its result or its exception becomes the promise's outcome. */
function run<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}
