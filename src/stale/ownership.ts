import { normalizeAddress } from './address.js';
import { serviceNameOf, sliceKey, type EndpointSliceLike } from './endpoint-slice.js';

/**
 * Owned targets as the kernel scan's pre-filter takes them: one address, or many IPv4 addresses
 * as numbers (a.b.c.d = a<<24 | b<<16 | c<<8 | d) on the same protocol (lower case) and port.
 */
export type OwnedTargets = Array<({ address: string } | { ipv4: Int32Array }) & { protocol?: string; port?: number }>;

/** What the stale classification asks of the endpoints: who owns a target, every owned target, a target's Service. */
export interface Ownership {
  owns(protocol: string, address: string, port: number | undefined): boolean;
  ownedTargets(): OwnedTargets;
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined;
}

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
export class OwnershipIndex implements Ownership {
  private readonly slices = new Map<string, SliceTargets>();
  /** One lookup per entry: address -> who owns which protocol/port there (reference counts). */
  private readonly byAddress = new Map<string, AddressOwners>();
  private targets = 0;
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
    return { removed: before.targets.length };
  }

  /** Replaces everything (a relist). Returns how many targets the old set had that the new lacks. */
  replaceAll(slices: Iterable<EndpointSliceLike>): { removed: number } {
    const oldTargets = new Set<string>();
    for (const t of this.slices.values()) for (const target of t.targets) oldTargets.add(target.id);
    for (const key of [...this.slices.keys()]) this.remove(key);
    for (const slice of slices) this.upsert(slice);
    for (const t of this.slices.values()) for (const target of t.targets) oldTargets.delete(target.id);
    return { removed: oldTargets.size };
  }

  /**
   * Whether some endpoint owns this target. `protocol` is conntrack's lower-case name (`tcp`,
   * `udp`, ...). Addresses from the kernel are canonical already (one map lookup); others are
   * normalized on a miss.
   */
  owns(protocol: string, address: string, port: number | undefined): boolean {
    const owners = this.lookup(address);
    if (owners === undefined) return false;
    if (owners.all > 0 || (owners.protoAll.get(protocol) ?? 0) > 0) return true;
    if (port === undefined) return true;
    return (owners.ports.get(protocol)?.get(port) ?? 0) > 0;
  }

  /** Whether any endpoint (any port, any protocol) has this address. */
  ownsAddress(address: string): boolean {
    return this.lookup(address) !== undefined;
  }

  /** The service (`namespace/name`) that owns or last owned this target, if known. */
  serviceOf(protocol: string, address: string, port: number | undefined): string | undefined {
    const addr = normalizeAddress(address);
    const proto = protocol.toLowerCase();
    return this.lastOwner.get(`${proto}|${addr}|${port ?? '*'}`) ?? this.lastOwner.get(`${proto}|${addr}|*`) ?? this.lastOwner.get(`*|${addr}|*`);
  }

  /**
   * Every owned target once, for a C-side pre-filter (netlink-native `scanDnatEntries`):
   * `protocol` absent = every protocol and port, `port` absent = every port of the protocol.
   */
  ownedTargets(): Array<{ address: string; protocol?: string; port?: number }> {
    const out = new Map<string, { address: string; protocol?: string; port?: number }>();
    for (const slice of this.slices.values()) {
      for (const t of slice.targets) {
        if (out.has(t.id)) continue;
        out.set(t.id, { address: t.address, ...(t.protocol === '*' ? {} : { protocol: t.protocol }), ...(t.port === undefined ? {} : { port: t.port }) });
      }
    }
    return [...out.values()];
  }

  get sliceCount(): number {
    return this.slices.size;
  }

  /** Distinct (protocol, address, port) targets, counting "all ports" as one. */
  get targetCount(): number {
    return this.targets;
  }

  private lookup(address: string): AddressOwners | undefined {
    return this.byAddress.get(address) ?? this.byAddress.get(normalizeAddress(address));
  }

  private apply(targets: SliceTargets, delta: 1 | -1): void {
    // Addresses first when adding, last when removing: a target always finds its address.
    if (delta === 1) this.applyAddresses(targets.addresses, delta);
    for (const t of targets.targets) {
      const owners = this.byAddress.get(t.address);
      if (owners === undefined) continue;
      let next: number;
      if (t.protocol === '*') {
        next = owners.all += delta;
      } else if (t.port === undefined) {
        next = bump(owners.protoAll, t.protocol, delta);
      } else {
        let ports = owners.ports.get(t.protocol);
        if (ports === undefined) owners.ports.set(t.protocol, (ports = new Map<number, number>()));
        next = bump(ports, t.port, delta);
        if (ports.size === 0) owners.ports.delete(t.protocol);
      }
      if (delta === 1 && next === 1) this.targets++;
      if (delta === -1 && next === 0) this.targets--;
      if (delta === 1) this.remember(t.port === undefined ? `${t.id}|*` : t.id, targets.service);
    }
    if (delta === -1) this.applyAddresses(targets.addresses, delta);
  }

  private applyAddresses(addresses: readonly string[], delta: 1 | -1): void {
    for (const address of addresses) {
      let owners = this.byAddress.get(address);
      if (owners === undefined) {
        owners = { refs: 0, all: 0, protoAll: new Map(), ports: new Map() };
        this.byAddress.set(address, owners);
      }
      owners.refs += delta;
      if (owners.refs <= 0) this.byAddress.delete(address);
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

interface AddressOwners {
  /** Endpoints (across slices) with this address. */
  refs: number;
  /** Slices without ports: every protocol and port. */
  all: number;
  /** Ports without a number: every port of that protocol. */
  protoAll: Map<string, number>;
  ports: Map<string, Map<number, number>>;
}

interface Target {
  /** `proto|addr|port`, `proto|addr` (all ports) or `*|addr` (all protocols and ports). */
  id: string;
  protocol: string;
  address: string;
  port: number | undefined;
}

interface SliceTargets {
  service: string;
  targets: Target[];
  addresses: string[];
}

function targetsOf(slice: EndpointSliceLike): SliceTargets {
  const addresses = new Set<string>();
  for (const endpoint of slice.endpoints ?? []) {
    for (const address of endpoint.addresses ?? []) addresses.add(normalizeAddress(address));
  }
  const targets = new Map<string, Target>();
  const ports = slice.ports ?? [];
  for (const address of addresses) {
    if (ports.length === 0) targets.set(`*|${address}`, { id: `*|${address}`, protocol: '*', address, port: undefined });
    for (const port of ports) {
      const protocol = (port.protocol ?? 'TCP').toLowerCase();
      const number = port.port ?? undefined;
      const id = number === undefined ? `${protocol}|${address}` : `${protocol}|${address}|${number}`;
      targets.set(id, { id, protocol, address, port: number });
    }
  }
  return { service: serviceNameOf(slice), targets: [...targets.values()], addresses: [...addresses] };
}

function countRemoved(before: SliceTargets, after: SliceTargets): number {
  const now = new Set(after.targets.map((t) => t.id));
  return before.targets.filter((t) => !now.has(t.id)).length;
}

function bump<K>(map: Map<K, number>, key: K, delta: 1 | -1): number {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
  return next;
}
