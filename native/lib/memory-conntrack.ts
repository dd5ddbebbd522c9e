/**
 * An in-memory stand-in for the kernel's conntrack table behind ConntrackApi, for unit tests
 * of the agent. The same contract suite (native/test/conntrack-contract.ts) runs against it and
 * against the real kernel, so it cannot drift from what the addon does.
 */
import { constants } from 'node:os';
import { addressKey } from './conntrack-address.js';
import type { ConntrackFillResult, ConntrackFillSpec } from './conntrack-convert.js';
import { expandFillSpec } from './conntrack-fill.js';
import { protocolName, statusBits, statusFlagNames } from './conntrack-names.js';
import { PROTOCOL_NUMBERS } from './types.js';
import { checkEntryRefs, countByProtocol, type CheckedEntryRef } from './conntrack-entry-refs.js';
import { checkScanOptions, DEFAULT_SCAN_BATCH, ownedMatcher } from './conntrack-scan.js';
import { checkDeleteOptions, checkListOptions, type CheckedFilter } from './conntrack-validate.js';
import { MemoryConntrackEvents } from './memory-conntrack-events.js';
import type {
  ConntrackApi,
  ConntrackEntry,
  ConntrackEventIndex,
  ConntrackEventsApi,
  ConntrackEventsOptions,
  ConntrackEntryRef,
  ConntrackStats,
  DeleteConntrackEntriesResult,
  ConntrackTuple,
  DeleteConntrackOptions,
  DeleteConntrackResult,
  ListConntrackOptions,
  ScanDnatOptions,
  ScanDnatResult,
} from './types.js';
import { IPS_DST_NAT } from './types.js';

const IPS_CONFIRMED = 1 << 3;
const STATEFUL = new Set([6, 132]);

function tupleKey(protocolNumber: number, zone: number, t: ConntrackTuple): string {
  return [protocolNumber, zone, addressKey(t.src), addressKey(t.dst), t.srcPort ?? '', t.dstPort ?? ''].join('|');
}

/** The kernel's hash keys of an entry: each direction's tuple with that direction's zone id. */
function entryKeys(e: ConntrackEntry): [string, string] {
  return [tupleKey(e.protocolNumber, e.origZone ?? e.zone, e.original), tupleKey(e.protocolNumber, e.replyZone ?? e.zone, e.reply)];
}

/** An entry's zone per direction (the kernel: one id, covering both directions or one). */
function zonesOf(zone: number, direction: 'both' | 'original' | 'reply' = 'both'): Pick<ConntrackEntry, 'zone' | 'origZone' | 'replyZone'> {
  return { zone, origZone: direction === 'reply' ? 0 : zone, replyZone: direction === 'original' ? 0 : zone };
}

export interface MemoryConntrackOptions {
  /** `nf_conntrack_max` to report (default 262144). */
  max?: number;
  /** CPUs to report in perCpu (default 1). */
  cpus?: number;
}

/** What the stand-in's event subscribers hear: an entry created, changed or removed. */
export type MemoryConntrackEvent = 'new' | 'update' | 'destroy';
export type MemoryConntrackListener = (kind: MemoryConntrackEvent, entry: ConntrackEntry) => void;

export class MemoryConntrack implements ConntrackApi, ConntrackEventsApi {
  private readonly table = new Map<number, ConntrackEntry>();
  private readonly listeners = new Set<MemoryConntrackListener>();
  /** Tuple keys (both directions) -> entry id, as the kernel's hash lookup. */
  private readonly byTuple = new Map<string, number>();
  private nextId = 1;
  private readonly max: number;
  private readonly cpus: number;

  constructor(options: MemoryConntrackOptions = {}) {
    this.max = options.max ?? 262144;
    this.cpus = options.cpus ?? 1;
  }

  /** Adds one entry (as a packet or ctnetlink would create it). Fails on a tuple clash, like the kernel (EEXIST). */
  insertEntry(entry: Omit<ConntrackEntry, 'id' | 'statusFlags' | 'protocol'> & { protocol?: ConntrackEntry['protocol'] }): ConntrackEntry {
    const status = (entry.status | IPS_CONFIRMED) >>> 0;
    const full: ConntrackEntry = {
      ...entry,
      origZone: entry.origZone ?? entry.zone,
      replyZone: entry.replyZone ?? entry.zone,
      protocol: protocolName(entry.protocolNumber),
      status,
      statusFlags: statusFlagNames(status),
      id: this.nextId++,
    };
    const keys = entryKeys(full);
    if (keys.some((k) => this.byTuple.has(k))) throw Object.assign(new Error('entry exists'), { errno: constants.errno.EEXIST });
    this.table.set(full.id, full);
    for (const k of keys) this.byTuple.set(k, full.id);
    this.emit('new', full);
    return full;
  }

  /** Changes an entry in place (state, timeout, status...), as a packet would; an `update` event. */
  updateEntry(id: number, patch: Partial<Pick<ConntrackEntry, 'state' | 'timeout' | 'status' | 'mark'>>): boolean {
    const entry = this.table.get(id);
    if (entry === undefined) return false;
    Object.assign(entry, patch);
    entry.status = (entry.status | IPS_CONFIRMED) >>> 0;
    entry.statusFlags = statusFlagNames(entry.status);
    this.emit('update', entry);
    return true;
  }

  /** The entry with this original tuple and zone (the kernel's exact-tuple GET), copied. */
  getByOriginal(protocolNumber: number, zone: number, original: ConntrackTuple): ConntrackEntry | undefined {
    const id = this.byTuple.get(tupleKey(protocolNumber, zone, original));
    const entry = id === undefined ? undefined : this.table.get(id);
    return entry === undefined || entryKeys(entry)[0] !== tupleKey(protocolNumber, zone, original) ? undefined : structuredClone(entry);
  }

  /** Event subscription (what ctnetlink multicasts); returns the unsubscribe function. */
  subscribe(listener: MemoryConntrackListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(kind: MemoryConntrackEvent, entry: ConntrackEntry): void {
    for (const listener of this.listeners) listener(kind, structuredClone(entry));
  }

  openConntrackEvents(options?: ConntrackEventsOptions): Promise<ConntrackEventIndex> {
    return settle(() => new MemoryConntrackEvents(this, options));
  }

  /** Test support with the addon's semantics (see ConntrackFillSpec). */
  insertConntrackForTest(specs: ConntrackFillSpec[]): Promise<ConntrackFillResult> {
    const started = performance.now();
    const result: ConntrackFillResult = { created: 0, exists: 0, failed: 0, firstErrno: 0, sends: 0, ackOverruns: 0, resent: 0, ms: 0 };
    for (const spec of specs) {
      const protocolNumber = PROTOCOL_NUMBERS[spec.protocol];
      for (const e of expandFillSpec(spec)) {
        if (protocolNumber === 1 || protocolNumber === 58) {
          // ctnetlink needs ICMP id/type/code in the tuple; the fill has none (EINVAL there too)
          result.failed++;
          result.firstErrno ||= constants.errno.EINVAL;
          continue;
        }
        try {
          this.insertEntry({
            ...e,
            state: STATEFUL.has(protocolNumber) ? (spec.state ?? 'NONE') : undefined,
            timeout: spec.timeout ?? 600,
            mark: spec.mark ?? 0,
            ...zonesOf(spec.zone ?? 0, spec.zoneDirection),
            status: statusBits([...(spec.statusFlags ?? []), ...(spec.dnat === true ? ['DST_NAT', 'SRC_NAT_DONE', 'DST_NAT_DONE'] : [])]),
          });
          result.created++;
        } catch {
          result.exists++;
        }
      }
    }
    result.ms = performance.now() - started;
    return Promise.resolve(result);
  }

  /** Removes one entry as if it expired (ENOENT for a later delete). */
  expire(id: number): boolean {
    const entry = this.table.get(id);
    if (entry === undefined) return false;
    this.table.delete(id);
    for (const key of entryKeys(entry)) this.byTuple.delete(key);
    this.emit('destroy', entry);
    return true;
  }

  /** Every entry, copied. */
  entries(): ConntrackEntry[] {
    return [...this.table.values()].map((e) => structuredClone(e));
  }

  deleteConntrack(options: DeleteConntrackOptions): Promise<DeleteConntrackResult> {
    return settle(() => this.deleteNow(options));
  }

  deleteConntrackEntries(entries: readonly ConntrackEntryRef[]): Promise<DeleteConntrackEntriesResult> {
    return settle(() => {
      const checked = checkEntryRefs('deleteConntrackEntries', entries);
      const started = performance.now();
      const result: DeleteConntrackEntriesResult = { deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 };
      for (const ref of checked) {
        // The kernel's lookup: original tuple in the zone (either direction's tuple hashes), then CTA_ID.
        const id = this.byTuple.get(tupleKey(ref.protocolNumber, ref.zone, ref.original));
        const entry = id === undefined ? undefined : this.table.get(id);
        const gone = entry === undefined || entry.family !== ref.family || (ref.id !== undefined && entry.id !== ref.id);
        if (gone || !this.expire(entry.id)) {
          // ENOENT: the addon re-checks with a GET (ref.zone, and recheckZone) before "already gone".
          const outcome = this.stillPresent(ref) ? 'failed' : 'alreadyGone';
          result[outcome]++;
          countByProtocol(result.byProtocol, ref.protocolNumber, outcome);
        } else {
          result.deleted++;
          countByProtocol(result.byProtocol, ref.protocolNumber, 'deleted');
        }
      }
      result.ms = performance.now() - started;
      return result;
    });
  }

  /** The addon's ENOENT re-check: a GET by the original tuple in each zone the ref allows. */
  private stillPresent(ref: CheckedEntryRef): boolean {
    for (const zone of ref.recheckZone === undefined ? [ref.zone] : [ref.zone, ref.recheckZone]) {
      const found = this.getByOriginal(ref.protocolNumber, zone, ref.original);
      if (found !== undefined && found.family === ref.family && (ref.id === undefined || found.id === ref.id)) return true;
    }
    return false;
  }

  scanDnatEntries(options: ScanDnatOptions): Promise<ScanDnatResult> {
    return settle(() => {
      const checked = checkScanOptions('scanDnatEntries', options);
      const started = performance.now();
      // Built at the first DNAT'ed entry: a table without one costs nothing per owned target.
      let owns: ((e: ConntrackEntry) => boolean) | undefined;
      const result: ScanDnatResult = { entries: [], scanned: 0, notNat: 0, owned: 0, pass: 0, ms: 0 };
      for (const entry of this.table.values()) {
        result.scanned++;
        if ((entry.status & IPS_DST_NAT) === 0) result.notNat++;
        else if ((owns ??= ownedMatcher(checked.ownedTargets))(entry)) result.owned++;
        else if (checked.limit === undefined || result.entries.length < checked.limit) result.entries.push(structuredClone(entry));
      }
      result.ms = performance.now() - started;
      if (options.onEntries === undefined) return result;
      // the addon's batches (one pass: the stand-in is never overrun)
      const batch = checked.batchSize ?? DEFAULT_SCAN_BATCH;
      for (let i = 0; i < result.entries.length; i += batch) options.onEntries(result.entries.slice(i, i + batch), 0);
      return { ...result, entries: [] };
    });
  }

  listConntrack(options?: ListConntrackOptions): Promise<ConntrackEntry[]> {
    return settle(() => this.listNow(options));
  }

  private deleteNow(options: DeleteConntrackOptions): DeleteConntrackResult {
    const checked = checkDeleteOptions('deleteConntrack', options);
    const started = performance.now();
    const result: DeleteConntrackResult = { scanned: 0, matched: 0, deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 };
    if (checked.addresses.length === 0) return result;
    const matches = compileFilter(checked);
    for (const entry of [...this.table.values()]) {
      result.scanned++;
      if (!matches(entry)) continue;
      result.matched++;
      if (checked.dryRun) continue;
      const outcome = this.expire(entry.id) ? 'deleted' : 'alreadyGone';
      result[outcome]++;
      countByProtocol(result.byProtocol, entry.protocolNumber, outcome);
    }
    result.ms = performance.now() - started;
    return result;
  }

  private listNow(options?: ListConntrackOptions): ConntrackEntry[] {
    const checked = checkListOptions('listConntrack', options);
    const matches = compileFilter(checked);
    const out: ConntrackEntry[] = [];
    for (const entry of this.table.values()) {
      if (checked.limit !== undefined && out.length >= checked.limit) break;
      if (matches(entry)) out.push(structuredClone(entry));
    }
    return out;
  }

  conntrackStats(): Promise<ConntrackStats> {
    const perCpu = Array.from({ length: this.cpus }, (_, cpu) => ({
      cpu, found: 0, invalid: 0, insert: 0, insertFailed: 0, drop: 0, earlyDrop: 0, error: 0, searchRestart: 0, clashResolve: 0, chainTooLong: 0,
    }));
    return Promise.resolve({ count: this.table.size, max: this.max, perCpu });
  }
}

/** Runs fn now; its result or its exception becomes the promise's outcome. */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}

/** The addon's matching rules (ct_entry_matches in native/src/wire/ct_parse.c). */
function compileFilter(f: CheckedFilter): (e: ConntrackEntry) => boolean {
  const addresses = f.addresses === undefined ? undefined : new Set(f.addresses.map((a) => addressKey(a)));
  const protocols = f.protocols === undefined ? undefined : new Set<number>(f.protocols.map((p) => PROTOCOL_NUMBERS[p]));
  return (e) => {
    if (protocols !== undefined && !protocols.has(e.protocolNumber)) return false;
    if (f.zone !== undefined && e.zone !== f.zone) return false;
    if (addresses === undefined) return true;
    const fields: Record<string, string> = { origSrc: e.original.src, origDst: e.original.dst, replySrc: e.reply.src, replyDst: e.reply.dst };
    return f.match.some((m) => addresses.has(addressKey(fields[m] ?? '')));
  };
}
