/**
 * The cluster's endpoints, merged per pod (targetRef.uid) over every EndpointSlice that lists
 * it: several Services select the same pod, and a dual-stack pod is in an IPv4 and an IPv6
 * slice. Incremental: a slice change costs the size of that slice (and of the few slices its
 * endpoints are also in), never of the cluster. Slices of namespaces that did not opt in are
 * kept (their addresses still count for the IP-reuse check) but merge to nothing.
 */
import type { Intern, SliceView } from './slice-view.js';

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

export class EndpointIndex {
  private readonly slices = new Map<string, SliceView>();
  /** uid -> the slice (most pods are in one) or slices listing it. */
  private readonly slicesOf = new Map<string, string | string[]>();
  /**
   * address -> who lists it: one uid listed once (the common case: a string, no Map per
   * address), or uid -> how many slices list that uid with that address.
   */
  private readonly holders = new Map<string, string | Map<string, number>>();
  /** namespace -> its slices (an opt-in change touches them). */
  private readonly byNamespace = new Map<string, Set<string>>();
  private readonly names = new Map<string, string>();
  /** Node names, one string each however many endpoints name them (pass to `viewSlice`). */
  readonly intern: Intern = (s) => {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    this.names.set(s, s);
    return s;
  };

  constructor(private readonly optedIn: (namespace: string) => boolean) {}

  get sliceCount(): number {
    return this.slices.size;
  }

  get endpointCount(): number {
    return this.slicesOf.size;
  }

  /** The keys of the slices held (what a relist compares against). */
  sliceKeys(): IterableIterator<string> {
    return this.slices.keys();
  }

  /** Every uid the slices list (tests; the restart sweep's owners come from the ownership index). */
  uids(): IterableIterator<string> {
    return this.slicesOf.keys();
  }

  /**
   * The uids whose merged view an upsert of `slice` may change: those added, removed or changed
   * in it (all of them when the slice's ports, Service or labels changed). A readiness flip in a
   * slice of 100 endpoints touches one uid, not 100.
   */
  changedBy(slice: SliceView): Set<string> {
    const before = this.slices.get(slice.key);
    const out = new Set<string>();
    if (before === undefined || !before.sameShape(slice)) {
      for (let j = 0; j < (before?.size ?? 0); j++) out.add((before as SliceView).uidAt(j));
      for (let i = 0; i < slice.size; i++) out.add(slice.uidAt(i));
      return out;
    }
    const seen = new Uint8Array(before.size);
    for (let i = 0; i < slice.size; i++) {
      const j = before.indexOf(slice.uidAt(i), i);
      if (j >= 0) seen[j] = 1;
      if (j < 0 || !slice.sameEndpoint(i, before, j)) out.add(slice.uidAt(i));
    }
    for (let j = 0; j < before.size; j++) if (seen[j] === 0) out.add(before.uidAt(j));
    return out;
  }

  /** Adds or replaces a slice; returns the uids whose merged view may have changed. */
  upsert(slice: SliceView): Set<string> {
    const touched = new Set<string>();
    const before = this.slices.get(slice.key);
    if (before !== undefined && before.sameLayout(slice)) {
      // The common rewrite (a readiness flip): conditions only, kept in place.
      for (let i = 0; i < slice.size; i++) if (!slice.sameEndpoint(i, before, i)) touched.add(before.uidAt(i));
      before.takeConditions(slice);
      return touched;
    }
    const view = before === undefined ? slice : slice.adoptFrom(before);
    const seen = new Uint8Array(before?.size ?? 0);
    for (let i = 0; i < view.size; i++) {
      const uid = view.uidAt(i);
      const j = before === undefined ? -1 : before.indexOf(uid, i);
      if (before !== undefined && j >= 0) {
        seen[j] = 1;
        if (view.sameIdentity(i, before, j)) {
          if (!view.sameEndpoint(i, before, j) || !view.sameShape(before)) touched.add(uid);
          continue;
        }
        before.forEachAddress(j, (a) => this.count(a, uid, -1));
      } else {
        this.join(uid, view.key);
      }
      view.forEachAddress(i, (a) => this.count(a, uid, +1));
      touched.add(uid);
    }
    if (before !== undefined) {
      for (let j = 0; j < before.size; j++) if (seen[j] === 0) this.unlink(before, j, touched);
      if (!view.sameShape(before)) for (let j = 0; j < before.size; j++) touched.add(before.uidAt(j));
    }
    this.slices.set(view.key, view);
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
    for (let j = 0; j < before.size; j++) this.unlink(before, j, touched);
    this.slices.delete(key);
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
    for (const uid of this.holderUids(address)) {
      for (const key of this.keysOf(uid)) {
        const slice = this.slices.get(key);
        const i = slice?.indexOf(uid) ?? -1;
        if (slice === undefined || i < 0 || !slice.hasAddress(i, address)) continue;
        if (slice.ports.length === 0 || port === undefined) return true;
        if (slice.ports.some((p) => p.port === port && p.protocol === protocol)) return true;
      }
    }
    return false;
  }

  /**
   * Every (address, port, protocol) a slice lists (the sweep's pre-filter in the kernel dump).
   * Not deduplicated: a pod listed by two slices with the same port is passed twice, which the
   * dump's set of targets absorbs, where a dedupe here would build a key string per target.
   */
  ownedTargets(): Array<{ address: string; protocol?: string; port?: number }> {
    const out: Array<{ address: string; protocol?: string; port?: number }> = [];
    for (const slice of this.slices.values()) {
      for (let i = 0; i < slice.size; i++) {
        slice.forEachAddress(i, (address) => {
          if (slice.ports.length === 0) out.push({ address });
          for (const p of slice.ports) out.push({ address, protocol: p.protocol, port: p.port });
        });
      }
    }
    return out;
  }

  /** Whether an opted-in slice lists `uid` terminating or not serving (what `merged(uid)?.draining` says, without building it). */
  isDraining(uid: string): boolean {
    for (const key of this.keysOf(uid)) {
      const slice = this.slices.get(key);
      if (slice === undefined || !this.optedIn(slice.namespace)) continue;
      const i = slice.indexOf(uid);
      if (i >= 0 && slice.drainingAt(i)) return true;
    }
    return false;
  }

  /** The Service (`namespace/name`) of a slice listing this target, if any. */
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined {
    for (const uid of this.holderUids(address)) {
      for (const key of this.keysOf(uid)) {
        const slice = this.slices.get(key);
        if (slice !== undefined && (port === undefined || slice.ports.some((p) => p.port === port && p.protocol === protocol))) return slice.service;
      }
    }
    return undefined;
  }

  /** The uids a slice lists now. */
  uidsOfSlice(key: string): string[] {
    const slice = this.slices.get(key);
    const out: string[] = [];
    for (let i = 0; i < (slice?.size ?? 0); i++) out.push((slice as SliceView).uidAt(i));
    return out;
  }

  /** Whether an opted-in slice lists `uid` (what `merged(uid) !== undefined` says, without building it). */
  isListed(uid: string): boolean {
    for (const key of this.keysOf(uid)) {
      const slice = this.slices.get(key);
      if (slice !== undefined && this.optedIn(slice.namespace)) return true;
    }
    return false;
  }

  /** Whether any slice lists `uid` (opted in or not). */
  has(uid: string): boolean {
    return this.slicesOf.has(uid);
  }

  /** The uids of the current endpoints with `address` (IP reuse: such an address is never flushed for another pod). */
  holdersOf(address: string): ReadonlyMap<string, number> | undefined {
    const h = this.holders.get(address);
    return typeof h === 'string' ? new Map([[h, 1]]) : h;
  }

  /** The uids of the current endpoints with `address`. */
  holderUids(address: string): readonly string[] {
    const h = this.holders.get(address);
    return h === undefined ? [] : typeof h === 'string' ? [h] : [...h.keys()];
  }

  /** The pod merged over its opted-in slices; undefined when none lists it. */
  merged(uid: string): MergedEndpoint | undefined {
    let out: MergedEndpoint | undefined;
    for (const key of this.keysOf(uid)) {
      const slice = this.slices.get(key);
      if (slice === undefined || !this.optedIn(slice.namespace)) continue;
      const i = slice.indexOf(uid);
      if (i < 0) continue;
      out ??= { uid, key: slice.keyAt(i), namespace: slice.namespace, nodeName: slice.nodeAt(i), addresses: [], targets: [], draining: false, terminating: false, flowPinningOff: false };
      out.nodeName ??= slice.nodeAt(i);
      for (const address of slice.addressesAt(i)) {
        if (!out.addresses.includes(address)) out.addresses.push(address);
        // A pod has a few targets: a scan of them beats a set of key strings built per call.
        for (const p of slice.ports) if (!hasTarget(out.targets, address, p.port, p.protocol)) out.targets.push({ address, port: p.port, protocol: p.protocol });
      }
      if (slice.drainingAt(i)) out.draining = true;
      if (slice.terminatingAt(i)) out.terminating = true;
      if (slice.flowPinningOff) out.flowPinningOff = true;
    }
    return out;
  }

  private keysOf(uid: string): readonly string[] {
    const k = this.slicesOf.get(uid);
    return k === undefined ? [] : typeof k === 'string' ? [k] : k;
  }

  private join(uid: string, key: string): void {
    const k = this.slicesOf.get(uid);
    if (k === undefined) this.slicesOf.set(uid, key);
    else if (typeof k === 'string') {
      if (k !== key) this.slicesOf.set(uid, [k, key]);
    } else if (!k.includes(key)) k.push(key);
  }

  private leave(uid: string, key: string): void {
    const k = this.slicesOf.get(uid);
    if (k === undefined) return;
    if (typeof k === 'string') {
      if (k === key) this.slicesOf.delete(uid);
      return;
    }
    const at = k.indexOf(key);
    if (at >= 0) k.splice(at, 1);
    if (k.length === 1) this.slicesOf.set(uid, k[0] as string);
    else if (k.length === 0) this.slicesOf.delete(uid);
  }

  private unlink(slice: SliceView, j: number, touched: Set<string>): void {
    const uid = slice.uidAt(j);
    touched.add(uid);
    this.leave(uid, slice.key);
    slice.forEachAddress(j, (a) => this.count(a, uid, -1));
  }

  private count(address: string, uid: string, delta: number): void {
    const h = this.holders.get(address);
    if (h === undefined) {
      if (delta > 0) this.holders.set(address, delta === 1 ? uid : new Map([[uid, delta]]));
      return;
    }
    const byUid = typeof h === 'string' ? new Map([[h, 1]]) : h;
    const n = (byUid.get(uid) ?? 0) + delta;
    if (n > 0) byUid.set(uid, n);
    else byUid.delete(uid);
    if (byUid.size === 0) this.holders.delete(address);
    else if (byUid.size === 1 && byUid.values().next().value === 1) this.holders.set(address, byUid.keys().next().value as string);
    else if (byUid !== h) this.holders.set(address, byUid);
  }
}

function hasTarget(targets: readonly EndpointTarget[], address: string, port: number, protocol: string): boolean {
  for (const t of targets) if (t.port === port && t.protocol === protocol && t.address === address) return true;
  return false;
}
