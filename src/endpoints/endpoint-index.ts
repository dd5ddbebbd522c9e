/**
 * The cluster's endpoints, merged per pod (targetRef.uid) over every EndpointSlice that lists
 * it: several Services select the same pod, and a dual-stack pod is in an IPv4 and an IPv6
 * slice. Incremental: a slice change costs the size of that slice (and of the few slices its
 * endpoints are also in), never of the cluster. Slices of namespaces that did not opt in are
 * kept (their addresses still count for the IP-reuse check) but merge to nothing; so are slices
 * of Services labelled `conndrain.io/hold=disabled`.
 *
 * The endpoints are rows of packed columns (endpoint-rows.ts) with slot tables by uid and by
 * address; a kept slice is its shape and the rows of its endpoints, in the slice's order.
 */
import type { OwnedTargets } from '../stale/ownership.js';
import { EndpointRows } from './endpoint-rows.js';
import { endpointKey, sameShape, type KeptEndpoints, type SliceShape, type SlicePort, type SliceView } from './slice-view.js';

/** One (address, port, protocol) an endpoint serves: what a hold or a flush acts on. */
export interface EndpointTarget {
  address: string;
  port: number;
  protocol: string;
}

/** A pod as the slices show it, merged. */
export interface MergedEndpoint {
  uid: string;
  key: string;
  namespace: string;
  nodeName: string | undefined;
  addresses: string[];
  targets: EndpointTarget[];
  /** Some slice lists it terminating or not serving (KEP-1672: never `!ready`, which publishNotReadyAddresses hides). */
  draining: boolean;
  /** Some slice lists it terminating. */
  terminating: boolean;
  /** A Service of it turned flow pinning off. */
  flowPinningOff: boolean;
}

/** A slice as the index keeps it: its shape and its endpoints' rows, in the slice's order. */
interface KeptSlice extends SliceShape {
  readonly id: number;
  readonly key: string;
  readonly namespace: string;
  readonly ports: readonly SlicePort[];
  readonly rows: Int32Array;
  /** Its endpoints' digests (slice-view.ts `EncodedEndpoints`), 2 per row, when it came from the protobuf watch. */
  digests: Uint32Array | undefined;
}

export class EndpointIndex {
  private readonly rows = new EndpointRows();
  private readonly slices = new Map<string, KeptSlice>();
  /** Kept slices by id (what a row names), ids reused. */
  private readonly byId: Array<KeptSlice | undefined> = [];
  private readonly freeIds: number[] = [];
  /** namespace -> its slices (an opt-in change touches them). */
  private readonly byNamespace = new Map<string, Set<string>>();
  /** `merged`'s rows of one uid (reused: merged calls nothing that calls it). */
  private readonly mergedRows: number[] = [];

  constructor(private readonly optedIn: (namespace: string) => boolean) {}

  get sliceCount(): number {
    return this.slices.size;
  }

  get endpointCount(): number {
    return this.rows.uidCount;
  }

  /** Bytes of the endpoint columns and tables (bench/endpoint-index). */
  get columnBytes(): number {
    return this.rows.bytes;
  }

  /** The keys of the slices held (what a relist compares against). */
  sliceKeys(): IterableIterator<string> {
    return this.slices.keys();
  }

  /** Every uid the slices list, once each (the first sync's plan, tests). */
  uids(): IterableIterator<string> {
    return this.rows.distinctUids();
  }

  /**
   * What the index keeps of slice `key`, for viewSlice to stand byte-identical endpoints for
   * (undefined when it keeps no digests of it: not kept, or last read as JSON). Valid until
   * that slice is upserted or removed.
   */
  keptEndpoints(key: string): KeptEndpoints | undefined {
    const kept = this.slices.get(key);
    if (kept?.digests === undefined) return undefined;
    return new KeptSliceEndpoints(kept, kept.digests, this.rows);
  }

  /**
   * The uids whose merged view an upsert of `slice` may change: those added, removed or changed
   * in it (all of them when the slice's ports, Service or labels changed). A readiness flip in a
   * slice of 100 endpoints touches one uid, not 100.
   */
  changedBy(slice: SliceView): Set<string> {
    const before = this.slices.get(slice.key);
    checkKeptSource(slice, before);
    const out = new Set<string>();
    if (before === undefined || !sameShape(before, slice)) {
      for (const row of before?.rows ?? []) out.add(this.rows.uidOf(row));
      for (let i = 0; i < slice.size; i++) out.add(slice.uidAt(i));
      return out;
    }
    const seen = new Uint8Array(before.rows.length);
    for (let i = 0; i < slice.size; i++) {
      const identical = slice.keptPositionOf(i);
      if (identical >= 0 && seen[identical] === 0) {
        seen[identical] = 1;
        continue;
      }
      const j = this.indexIn(before, slice.uidAt(i), i);
      // A row already matched (the slice lists the pod twice) is not this endpoint's: upsert adds one.
      const same = j >= 0 && seen[j] === 0 && this.rows.sameEndpoint(before.rows[j] as number, slice, i);
      if (j >= 0) seen[j] = 1;
      if (!same) out.add(slice.uidAt(i));
    }
    for (let j = 0; j < before.rows.length; j++) if (seen[j] === 0) out.add(this.rows.uidOf(before.rows[j] as number));
    return out;
  }

  /** Adds or replaces a slice; returns the uids whose merged view may have changed. */
  upsert(slice: SliceView): Set<string> {
    const touched = new Set<string>();
    const before = this.slices.get(slice.key);
    checkKeptSource(slice, before);
    const shapeKept = before !== undefined && sameShape(before, slice);
    if (before !== undefined && shapeKept && this.sameLayout(before, slice)) {
      // The common rewrite (a readiness flip): conditions only, changed in place. The digests
      // too: a new array kept per event would outlive a young collection and be copied and
      // promoted (what young collections cost is mostly what survives them).
      if (before.digests !== undefined && slice.digests !== undefined && before.digests.length === slice.digests.length) before.digests.set(slice.digests);
      else before.digests = slice.digests;
      for (let i = 0; i < slice.size; i++) {
        if (slice.keptPositionOf(i) === i) continue;
        const row = before.rows[i] as number;
        if (this.rows.conditionsOf(row) === slice.flagsAt(i)) continue;
        this.rows.setConditions(row, slice.flagsAt(i));
        touched.add(slice.uidAt(i));
      }
      return touched;
    }
    const id = before?.id ?? this.freeIds.pop() ?? this.byId.length;
    const kept = new Int32Array(slice.size);
    const seen = new Uint8Array(before?.rows.length ?? 0);
    for (let i = 0; i < slice.size; i++) {
      const identical = slice.keptPositionOf(i);
      if (before !== undefined && identical >= 0 && seen[identical] === 0) {
        // Byte-identical to the kept endpoint: same pod, node, addresses and conditions.
        seen[identical] = 1;
        kept[i] = before.rows[identical] as number;
        if (!shapeKept) touched.add(slice.uidAt(i));
        continue;
      }
      const uid = slice.uidAt(i);
      const j = before === undefined ? -1 : this.indexIn(before, uid, i);
      const row = j < 0 || seen[j] === 1 ? -1 : (before?.rows[j] as number);
      if (row >= 0 && this.rows.sameIdentity(row, slice, i)) {
        seen[j] = 1;
        if (this.rows.conditionsOf(row) !== slice.flagsAt(i) || !shapeKept) touched.add(uid);
        this.rows.setConditions(row, slice.flagsAt(i));
        kept[i] = row;
        continue;
      }
      kept[i] = this.rows.add(id, slice, i);
      touched.add(uid);
    }
    if (before !== undefined) {
      for (let j = 0; j < before.rows.length; j++) if (seen[j] === 0) this.release(before.rows[j] as number, touched);
    }
    const view: KeptSlice = { id, key: slice.key, namespace: slice.namespace, service: slice.service, ports: shapeKept ? before.ports : slice.ports, flowPinningOff: slice.flowPinningOff, holdDisabled: slice.holdDisabled, rows: kept, digests: slice.digests };
    this.slices.set(view.key, view);
    this.byId[id] = view;
    let keys = this.byNamespace.get(view.namespace);
    if (keys === undefined) this.byNamespace.set(view.namespace, (keys = new Set()));
    keys.add(view.key);
    return touched;
  }

  /** Forgets a slice (deleted, or it stopped matching the selector); returns the uids it listed. */
  remove(key: string): Set<string> {
    const touched = new Set<string>();
    const before = this.slices.get(key);
    if (before === undefined) return touched;
    for (const row of before.rows) this.release(row, touched);
    this.slices.delete(key);
    this.byId[before.id] = undefined;
    this.freeIds.push(before.id);
    this.byNamespace.get(before.namespace)?.delete(key);
    if (this.byNamespace.get(before.namespace)?.size === 0) this.byNamespace.delete(before.namespace);
    return touched;
  }

  /** The uids of a namespace's slices (its opt-in changed). */
  uidsOfNamespace(namespace: string): Set<string> {
    const out = new Set<string>();
    for (const key of this.byNamespace.get(namespace) ?? []) for (const uid of this.uidsOfSlice(key)) out.add(uid);
    return out;
  }

  /**
   * Whether some slice lists `address` with this port and protocol (`protocol` as conntrack
   * names it, lower-case); a slice without ports owns the address on every port. The restart
   * sweep asks this instead of keeping a second index of the cluster.
   */
  owns(protocol: string, address: string, port: number | undefined): boolean {
    for (const row of this.rows.rowsAt(address)) {
      const slice = this.sliceOf(row);
      if (slice.ports.length === 0 || port === undefined) return true;
      if (slice.ports.some((p) => p.port === port && p.protocol === protocol)) return true;
    }
    return false;
  }

  /**
   * Every (address, port, protocol) a slice lists (the sweep's pre-filter in the kernel dump):
   * per slice and port, its IPv4 addresses as one Int32Array and any others one by one, so the
   * cluster's targets are a few thousand objects, not one (and an address string) per target.
   * Not deduplicated: a pod listed by two slices with the same port is passed twice, which the
   * dump's set of targets absorbs.
   */
  ownedTargets(): OwnedTargets {
    const out: OwnedTargets = [];
    for (const slice of this.slices.values()) {
      const ipv4: number[] = [];
      const others: string[] = [];
      for (const row of slice.rows) {
        const packed = this.rows.packedIpv4(row);
        if (packed !== undefined) ipv4.push(packed);
        else {
          const list = this.rows.addressListOf(row);
          if (typeof list === 'string') others.push(list);
          else others.push(...list);
        }
      }
      const packed = Int32Array.from(ipv4);
      for (const port of slice.ports.length === 0 ? [undefined] : slice.ports) {
        const on = port === undefined ? {} : { protocol: port.protocol, port: port.port };
        if (packed.length > 0) out.push({ ipv4: packed, ...on });
        for (const address of others) out.push({ address, ...on });
      }
    }
    return out;
  }

  /** Whether an opted-in slice lists `uid` terminating or not serving (what `merged(uid)?.draining` says, without building it). */
  isDraining(uid: string): boolean {
    for (const row of this.rows.rowsOf(uid)) if (this.rows.drainingAt(row) && this.actsOn(this.sliceOf(row))) return true;
    return false;
  }

  /** The Service (`namespace/name`) of a slice listing this target, if any. */
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined {
    for (const row of this.rows.rowsAt(address)) {
      const slice = this.sliceOf(row);
      if (port === undefined || slice.ports.some((p) => p.port === port && p.protocol === protocol)) return slice.service;
    }
    return undefined;
  }

  /** The uids a slice lists now. */
  uidsOfSlice(key: string): string[] {
    const out: string[] = [];
    for (const row of this.slices.get(key)?.rows ?? []) out.push(this.rows.uidOf(row));
    return out;
  }

  /** Whether an opted-in slice lists `uid` (what `merged(uid) !== undefined` says, without building it). */
  isListed(uid: string): boolean {
    for (const row of this.rows.rowsOf(uid)) if (this.actsOn(this.sliceOf(row))) return true;
    return false;
  }

  /** Whether any slice lists `uid` (opted in or not). */
  has(uid: string): boolean {
    return this.rows.hasUid(uid);
  }

  /** The uids of the current endpoints with `address`, each with how many slices list it there (IP reuse: such an address is never flushed for another pod). */
  holdersOf(address: string): ReadonlyMap<string, number> | undefined {
    const rows = this.rows.rowsAt(address);
    if (rows.length === 0) return undefined;
    const out = new Map<string, number>();
    for (const row of rows) {
      const uid = this.rows.uidOf(row);
      out.set(uid, (out.get(uid) ?? 0) + 1);
    }
    return out;
  }

  /** The uids of the current endpoints with `address`. */
  holderUids(address: string): readonly string[] {
    const out: string[] = [];
    for (const row of this.rows.rowsAt(address)) {
      const uid = this.rows.uidOf(row);
      if (!out.includes(uid)) out.push(uid);
    }
    return out;
  }

  /** The pod merged over its opted-in slices; undefined when none lists it. */
  merged(uid: string): MergedEndpoint | undefined {
    let out: MergedEndpoint | undefined;
    // Into one array reused, indexed (not for-of): this runs twice per watch event.
    const rows = this.rows.rowsOf(uid, this.mergedRows);
    for (let k = 0; k < rows.length; k++) {
      const row = rows[k] as number;
      const slice = this.sliceOf(row);
      if (!this.actsOn(slice)) continue;
      const list = this.rows.addressListOf(row);
      out ??= { uid, key: endpointKey(slice.namespace, this.rows.refOf(row), list), namespace: slice.namespace, nodeName: this.rows.nodeOf(row), addresses: [], targets: [], draining: false, terminating: false, flowPinningOff: false };
      out.nodeName ??= this.rows.nodeOf(row);
      // Runs twice per watch event (before and after the upsert): one address, the common case, makes no array.
      if (typeof list === 'string') addMergedAddress(out, list, slice.ports);
      else for (const address of list) addMergedAddress(out, address, slice.ports);
      if (this.rows.drainingAt(row)) out.draining = true;
      if (this.rows.terminatingAt(row)) out.terminating = true;
      if (slice.flowPinningOff) out.flowPinningOff = true;
    }
    return out;
  }

  /** Frees a row its slice no longer lists; its uid is touched. */
  private release(row: number, touched: Set<string>): void {
    touched.add(this.rows.uidOf(row));
    this.rows.release(row);
  }

  /** Held and flushed: its namespace opted in and its Service did not opt out. */
  private actsOn(slice: KeptSlice): boolean {
    return !slice.holdDisabled && this.optedIn(slice.namespace);
  }

  /** Whether the kept slice `key` is of a Service that opted out; undefined when not kept. */
  holdDisabledOf(key: string): boolean | undefined {
    return this.slices.get(key)?.holdDisabled;
  }

  private sliceOf(row: number): KeptSlice {
    return this.byId[this.rows.sliceOf(row)] as KeptSlice;
  }

  /** Where `uid` is in `slice`, or -1 (`hint`: the position to try first). */
  private indexIn(slice: KeptSlice, uid: string, hint: number): number {
    if (hint < slice.rows.length && this.rows.uidIs(slice.rows[hint] as number, uid)) return hint;
    for (let j = 0; j < slice.rows.length; j++) if (this.rows.uidIs(slice.rows[j] as number, uid)) return j;
    return -1;
  }

  /** `slice` lists the same endpoints in the same order as `kept`: only conditions may differ. */
  private sameLayout(kept: KeptSlice, slice: SliceView): boolean {
    if (kept.rows.length !== slice.size) return false;
    for (let i = 0; i < slice.size; i++) {
      const identical = slice.keptPositionOf(i);
      if (identical >= 0 ? identical !== i : !this.rows.sameIdentity(kept.rows[i] as number, slice, i)) return false;
    }
    return true;
  }
}

/** A view whose endpoints stand for kept rows must meet the kept slice it was read against (its positions are that slice's). */
function checkKeptSource(slice: SliceView, kept: KeptSlice | undefined): void {
  const source = slice.keptSource;
  if (source !== undefined && source !== kept) throw new Error(`endpoint index: a view of ${slice.key} read against a kept slice since replaced`);
}

/** Adds an address and its targets on `ports` to a merged view, each once. */
function addMergedAddress(out: MergedEndpoint, address: string, ports: readonly SlicePort[]): void {
  if (!out.addresses.includes(address)) out.addresses.push(address);
  // A pod has a few targets: a scan of them beats a set of key strings built per call.
  for (const p of ports) if (!hasTarget(out.targets, address, p.port, p.protocol)) out.targets.push({ address, port: p.port, protocol: p.protocol });
}

/** Whether `targets` has the one at `address`, `port`, `protocol` (a pod has a few: a scan beats a set of key strings). */
export function hasTarget(targets: readonly EndpointTarget[], address: string, port: number, protocol: string): boolean {
  for (const t of targets) if (t.port === port && t.protocol === protocol && t.address === address) return true;
  return false;
}

/**
 * A kept slice's endpoints as viewSlice reads them (`KeptEndpoints`). A class, not an object of
 * closures: one is made per watch event, and eight closures a call were most of what the
 * agent allocated for a readiness flip (bench/slice-events).
 */
class KeptSliceEndpoints implements KeptEndpoints {
  constructor(
    readonly source: KeptSlice,
    private readonly digests: Uint32Array,
    private readonly rows: EndpointRows,
  ) {}

  get size(): number {
    return this.source.rows.length;
  }

  find(high: number, low: number, hint: number): number {
    const { digests } = this;
    if (digests[2 * hint] === high && digests[2 * hint + 1] === low) return hint;
    const size = this.source.rows.length;
    for (let j = 0; j < size; j++) if (digests[2 * j] === high && digests[2 * j + 1] === low) return j;
    return -1;
  }

  private rowAt(j: number): number {
    return this.source.rows[j] as number;
  }

  uidAt(j: number): string {
    return this.rows.uidOf(this.rowAt(j));
  }

  refAt(j: number): string | undefined {
    return this.rows.refOf(this.rowAt(j));
  }

  nodeAt(j: number): string | undefined {
    return this.rows.nodeOf(this.rowAt(j));
  }

  addressListAt(j: number): string | readonly string[] {
    return this.rows.addressListOf(this.rowAt(j));
  }

  flagsAt(j: number): number {
    return this.rows.conditionsOf(this.rowAt(j));
  }
}
