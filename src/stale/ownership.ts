import { normalizeAddress } from './address.js';
import { serviceNameOf, sliceKey, type EndpointSliceLike } from './endpoint-slice.js';

/**
 * Which (protocol, address, port) targets the cluster's EndpointSlices own right now.
 *
 * Every endpoint counts, whatever its conditions: ready, serving and terminating endpoints
 * all still carry (or may carry) live connections. A port with no number means "all ports"
 * (EndpointSlice API); a slice with no ports at all owns its addresses on every port and
 * protocol (the safe reading: such an address is never called stale).
 *
 * Incremental: `upsert`/`remove` by slice, with reference counts, so a watch event costs the
 * size of one slice and not of the whole cluster.
 */
export class OwnershipIndex {
  private readonly slices = new Map<string, SliceTargets>();
  private readonly exact = new Map<string, number>();
  private readonly anyPort = new Map<string, number>();
  private readonly addresses = new Map<string, number>();
  /** Last known service of a target, kept after it goes so logs can name the service. */
  private readonly lastOwner = new Map<string, string>();
  private readonly lastOwnerLimit: number;

  constructor(options: { lastOwnerLimit?: number } = {}) {
    this.lastOwnerLimit = options.lastOwnerLimit ?? 100_000;
  }

  /** Adds or replaces a slice. Returns how many targets it no longer owns (endpoint removals). */
  upsert(slice: EndpointSliceLike): { removed: number } {
    const key = sliceKey(slice);
    const before = this.slices.get(key);
    const after = targetsOf(slice);
    this.apply(after, +1);
    if (before !== undefined) this.apply(before, -1);
    this.slices.set(key, after);
    return { removed: before === undefined ? 0 : countRemoved(before, after) };
  }

  /** Forgets a slice (deleted). Returns how many targets it owned. */
  remove(slice: EndpointSliceLike | string): { removed: number } {
    const key = typeof slice === 'string' ? slice : sliceKey(slice);
    const before = this.slices.get(key);
    if (before === undefined) return { removed: 0 };
    this.apply(before, -1);
    this.slices.delete(key);
    return { removed: before.exact.length + before.anyPort.length };
  }

  /** Replaces everything (a relist). Returns how many targets the old set had that the new lacks. */
  replaceAll(slices: Iterable<EndpointSliceLike>): { removed: number } {
    const oldTargets = new Set<string>([...this.exact.keys(), ...this.anyPort.keys()]);
    for (const key of [...this.slices.keys()]) this.remove(key);
    for (const slice of slices) this.upsert(slice);
    let removed = 0;
    for (const target of oldTargets) if (!this.exact.has(target) && !this.anyPort.has(target)) removed++;
    return { removed };
  }

  /** Whether some endpoint owns this target. `protocol` is conntrack's (`tcp`, `udp`, ...). */
  owns(protocol: string, address: string, port: number | undefined): boolean {
    const addr = normalizeAddress(address);
    const proto = protocol.toLowerCase();
    if (this.anyPort.has(`${proto}|${addr}`) || this.anyPort.has(`*|${addr}`)) return true;
    if (port === undefined) return this.addresses.has(addr);
    return this.exact.has(`${proto}|${addr}|${port}`);
  }

  /** Whether any endpoint (any port, any protocol) has this address. */
  ownsAddress(address: string): boolean {
    return this.addresses.has(normalizeAddress(address));
  }

  /** The service (`namespace/name`) that owns or last owned this target, if known. */
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined {
    const addr = normalizeAddress(address);
    const proto = protocol.toLowerCase();
    return this.lastOwner.get(`${proto}|${addr}|${port ?? '*'}`) ?? this.lastOwner.get(`${proto}|${addr}|*`) ?? this.lastOwner.get(`*|${addr}`);
  }

  get sliceCount(): number {
    return this.slices.size;
  }

  get targetCount(): number {
    return this.exact.size + this.anyPort.size;
  }

  private apply(targets: SliceTargets, delta: 1 | -1): void {
    for (const t of targets.exact) bump(this.exact, t, delta);
    for (const t of targets.anyPort) bump(this.anyPort, t, delta);
    for (const a of targets.addresses) bump(this.addresses, a, delta);
    if (delta === 1) {
      for (const t of targets.exact) this.remember(t, targets.service);
      for (const t of targets.anyPort) this.remember(t.startsWith('*|') ? t : `${t}|*`, targets.service);
    }
  }

  private remember(target: string, service: string): void {
    this.lastOwner.delete(target);
    this.lastOwner.set(target, service);
    if (this.lastOwner.size > this.lastOwnerLimit) {
      const oldest = this.lastOwner.keys().next();
      if (oldest.done !== true) this.lastOwner.delete(oldest.value);
    }
  }
}

interface SliceTargets {
  service: string;
  exact: string[];
  anyPort: string[];
  addresses: string[];
}

function targetsOf(slice: EndpointSliceLike): SliceTargets {
  const addresses = new Set<string>();
  for (const endpoint of slice.endpoints ?? []) {
    for (const address of endpoint.addresses ?? []) addresses.add(normalizeAddress(address));
  }
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  const ports = slice.ports ?? [];
  for (const address of addresses) {
    if (ports.length === 0) anyPort.add(`*|${address}`);
    for (const port of ports) {
      const proto = (port.protocol ?? 'TCP').toLowerCase();
      if (port.port === undefined || port.port === null) anyPort.add(`${proto}|${address}`);
      else exact.add(`${proto}|${address}|${port.port}`);
    }
  }
  return { service: serviceNameOf(slice), exact: [...exact], anyPort: [...anyPort], addresses: [...addresses] };
}

function countRemoved(before: SliceTargets, after: SliceTargets): number {
  const now = new Set([...after.exact, ...after.anyPort]);
  return [...before.exact, ...before.anyPort].filter((t) => !now.has(t)).length;
}

function bump(map: Map<string, number>, key: string, delta: 1 | -1): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
