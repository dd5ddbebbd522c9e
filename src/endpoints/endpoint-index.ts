/**
 * The cluster's endpoints, merged per pod (targetRef.uid) over every EndpointSlice that lists
 * it: several Services select the same pod, and a dual-stack pod is in an IPv4 and an IPv6
 * slice. Incremental: a slice change costs the size of that slice (and of the few slices its
 * endpoints are also in), never of the cluster. Slices of namespaces that did not opt in are
 * kept (their addresses still count for the IP-reuse check) but merge to nothing.
 */
import type { SliceEndpoint, SlicePort, SliceView } from './slice-view.js';

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
  /** uid -> the slices listing it. */
  private readonly slicesOf = new Map<string, string[]>();
  /**
   * address -> who lists it: one uid listed once (the common case: a string, no Map per
   * address), or uid -> how many slices list that uid with that address.
   */
  private readonly holders = new Map<string, string | Map<string, number>>();
  /** namespace -> its slices (an opt-in change touches them). */
  private readonly byNamespace = new Map<string, Set<string>>();

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
    if (before === undefined || before.service !== slice.service || before.flowPinningOff !== slice.flowPinningOff || !samePorts(before.ports, slice.ports)) {
      for (const e of before?.endpoints ?? []) out.add(e.uid);
      for (const e of slice.endpoints) out.add(e.uid);
      return out;
    }
    const old = new Map<string, SliceEndpoint>();
    for (const e of before.endpoints) old.set(e.uid, e);
    for (const e of slice.endpoints) {
      const was = old.get(e.uid);
      old.delete(e.uid);
      if (was === undefined || !sameEndpoint(was, e)) out.add(e.uid);
    }
    for (const uid of old.keys()) out.add(uid);
    return out;
  }

  /** Adds or replaces a slice; returns the uids whose merged view may have changed. */
  upsert(slice: SliceView): Set<string> {
    const touched = new Set<string>();
    const before = this.slices.get(slice.key);
    if (before !== undefined) this.unlink(before, touched);
    this.slices.set(slice.key, slice);
    let keys = this.byNamespace.get(slice.namespace);
    if (keys === undefined) this.byNamespace.set(slice.namespace, (keys = new Set()));
    keys.add(slice.key);
    for (const e of slice.endpoints) {
      touched.add(e.uid);
      const list = this.slicesOf.get(e.uid);
      if (list === undefined) this.slicesOf.set(e.uid, [slice.key]);
      else if (!list.includes(slice.key)) list.push(slice.key);
      for (const address of e.addresses) this.count(address, e.uid, +1);
    }
    return touched;
  }

  /** Forgets a slice (deleted, or it stopped matching the selector); returns the uids it listed. */
  remove(key: string): Set<string> {
    const touched = new Set<string>();
    const before = this.slices.get(key);
    if (before === undefined) return touched;
    this.unlink(before, touched);
    this.slices.delete(key);
    this.byNamespace.get(before.namespace)?.delete(key);
    if (this.byNamespace.get(before.namespace)?.size === 0) this.byNamespace.delete(before.namespace);
    return touched;
  }

  /** The uids of a namespace's slices (its opt-in changed). */
  uidsOfNamespace(namespace: string): Set<string> {
    const out = new Set<string>();
    for (const key of this.byNamespace.get(namespace) ?? []) for (const e of this.slices.get(key)?.endpoints ?? []) out.add(e.uid);
    return out;
  }

  /**
   * Whether some slice lists `address` with this port and protocol (`protocol` as conntrack
   * names it, lower-case); a slice without ports owns the address on every port. The restart
   * sweep asks this instead of keeping a second index of the cluster.
   */
  owns(protocol: string, address: string, port: number | undefined): boolean {
    for (const uid of this.holderUids(address)) {
      for (const key of this.slicesOf.get(uid) ?? []) {
        const slice = this.slices.get(key);
        if (slice === undefined || !slice.endpoints.some((e) => e.uid === uid && e.addresses.includes(address))) continue;
        if (slice.ports.length === 0 || port === undefined) return true;
        if (slice.ports.some((p) => p.port === port && p.protocol === protocol)) return true;
      }
    }
    return false;
  }

  /** Every (address, port, protocol) a slice lists, once (the sweep's pre-filter in the kernel dump). */
  ownedTargets(): Array<{ address: string; protocol?: string; port?: number }> {
    const out = new Map<string, { address: string; protocol?: string; port?: number }>();
    for (const slice of this.slices.values()) {
      for (const e of slice.endpoints) {
        for (const address of e.addresses) {
          if (slice.ports.length === 0) out.set(`*/${address}`, { address });
          for (const p of slice.ports) out.set(`${p.protocol}/${address}/${p.port}`, { address, protocol: p.protocol, port: p.port });
        }
      }
    }
    return [...out.values()];
  }

  /** The Service (`namespace/name`) of a slice listing this target, if any. */
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined {
    for (const uid of this.holderUids(address)) {
      for (const key of this.slicesOf.get(uid) ?? []) {
        const slice = this.slices.get(key);
        if (slice !== undefined && (port === undefined || slice.ports.some((p) => p.port === port && p.protocol === protocol))) return slice.service;
      }
    }
    return undefined;
  }

  /** The uids a slice lists now. */
  uidsOfSlice(key: string): string[] {
    return (this.slices.get(key)?.endpoints ?? []).map((e) => e.uid);
  }

  /** Whether an opted-in slice lists `uid` (what `merged(uid) !== undefined` says, without building it). */
  isListed(uid: string): boolean {
    for (const key of this.slicesOf.get(uid) ?? []) {
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
    const keys = this.slicesOf.get(uid);
    if (keys === undefined) return undefined;
    let out: MergedEndpoint | undefined;
    const seenTargets = new Set<string>();
    for (const key of keys) {
      const slice = this.slices.get(key);
      if (slice === undefined || !this.optedIn(slice.namespace)) continue;
      const e = slice.endpoints.find((x) => x.uid === uid);
      if (e === undefined) continue;
      out ??= { uid, key: e.key, namespace: slice.namespace, nodeName: e.nodeName, addresses: [], targets: [], draining: false, terminating: false, flowPinningOff: false };
      out.nodeName ??= e.nodeName;
      for (const a of e.addresses) if (!out.addresses.includes(a)) out.addresses.push(a);
      for (const t of targetsOf(e, slice.ports)) {
        const id = `${t.protocol}/${t.address}/${t.port}`;
        if (seenTargets.has(id)) continue;
        seenTargets.add(id);
        out.targets.push(t);
      }
      if (e.terminating || !e.serving) out.draining = true;
      if (e.terminating) out.terminating = true;
      if (slice.flowPinningOff) out.flowPinningOff = true;
    }
    return out;
  }

  private unlink(slice: SliceView, touched: Set<string>): void {
    for (const e of slice.endpoints) {
      touched.add(e.uid);
      const list = this.slicesOf.get(e.uid);
      if (list !== undefined) {
        const at = list.indexOf(slice.key);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0) this.slicesOf.delete(e.uid);
      }
      for (const address of e.addresses) this.count(address, e.uid, -1);
    }
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

function samePorts(a: readonly SlicePort[], b: readonly SlicePort[]): boolean {
  return a.length === b.length && a.every((p, i) => p.port === b[i]?.port && p.protocol === b[i]?.protocol);
}

function sameEndpoint(a: SliceEndpoint, b: SliceEndpoint): boolean {
  return a.serving === b.serving && a.terminating === b.terminating && a.nodeName === b.nodeName && a.key === b.key
    && a.addresses.length === b.addresses.length && a.addresses.every((x, i) => x === b.addresses[i]);
}

function targetsOf(e: SliceEndpoint, ports: readonly SlicePort[]): EndpointTarget[] {
  const out: EndpointTarget[] = [];
  for (const address of e.addresses) for (const p of ports) out.push({ address, port: p.port, protocol: p.protocol });
  return out;
}
