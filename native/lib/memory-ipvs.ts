/**
 * An in-memory IPVS that behaves like the kernel's (net/netfilter/ipvs/ip_vs_ctl.c) for
 * everything IpvsApi does: the same errors (ESRCH for a missing service, ENOENT for a missing
 * destination or scheduler, EEXIST, EINVAL for mixed families without tunnel, a GUE tunnel
 * without port, ERANGE for lower > upper threshold), a weight edit that keeps every other
 * field, HASHED reported on listed services, destinations listed newest first.
 * The contract suite (native/test/ipvs-contract.ts) runs against it and against the real
 * kernel in the VM, so the two cannot drift.
 *
 * Tests use the `proxy*` methods to play the node's service proxy (kube-proxy) changing IPVS
 * behind the agent's back, and setConnections to fake connection counters.
 */
import { NetlinkError, type IpvsApi, type IpvsDestination, type IpvsDestinationKey, type IpvsDestinationSpec, type IpvsService, type IpvsServiceKey, type IpvsServiceSpec, type IpvsWeightEdit } from './types.js';
import { canonicalAddress, addressFamily, checkDestinationKey, checkDestinationSpec, checkServiceKey, checkServiceSpec, checkWeight, defaultNetmask, ipvsFlagNames, IPVS_SVC_F_HASHED, sameDestinationKey } from './ipvs-keys.js';
import { errnoNumber, ipvsError, ipvsUnavailable } from './ipvs-errors.js';

/** Schedulers the Debian kernel ships as ip_vs_<name> modules. */
export const KNOWN_SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos'];

interface StoredService {
  service: IpvsService;
  /** Newest first, like the kernel's list_add_rcu at the head of svc->destinations. */
  destinations: IpvsDestination[];
}

export interface IpvsHistoryEntry {
  op: string;
  service?: IpvsServiceKey;
  destination?: IpvsDestinationKey;
  weight?: number;
}

export interface MemoryIpvsOptions {
  /** Behave as a kernel without the ip_vs module: every call rejects with EIPVSUNAVAILABLE. */
  unavailable?: boolean;
  schedulers?: readonly string[];
}

function canonicalServiceKey(key: IpvsServiceKey): IpvsServiceKey {
  if (key.fwmark !== undefined) return { family: key.family, fwmark: key.fwmark };
  return { family: key.family, protocol: key.protocol, address: canonicalAddress(key.address), port: key.port };
}

/** The kernel finds a service by hash (ip_vs_service_find); so does the stand-in: one string per key. */
function serviceLookupKey(key: IpvsServiceKey): string {
  const c = canonicalServiceKey(key);
  return c.fwmark !== undefined ? `${c.family}/fwmark/${c.fwmark}` : `${c.family}/${c.protocol}/${c.address}/${c.port}`;
}

function copyService(s: IpvsService): IpvsService {
  return { ...s, key: { ...s.key }, flagNames: [...s.flagNames] };
}

export class MemoryIpvs implements IpvsApi {
  private readonly services: StoredService[] = [];
  private readonly byKey = new Map<string, StoredService>();
  private readonly schedulers: Set<string>;
  /** Every successful change made through IpvsApi (not the proxy* simulations), in order. */
  readonly history: IpvsHistoryEntry[] = [];
  unavailable: boolean;

  constructor(options: MemoryIpvsOptions = {}) {
    this.unavailable = options.unavailable ?? false;
    this.schedulers = new Set(options.schedulers ?? KNOWN_SCHEDULERS);
  }

  private enter(op: string): void {
    if (this.unavailable) throw ipvsUnavailable(op);
  }

  private find(op: string, key: IpvsServiceKey): StoredService {
    const stored = this.byKey.get(serviceLookupKey(key));
    if (stored === undefined) throw ipvsError(op, errnoNumber('ESRCH'), { service: key });
    return stored;
  }

  private findDest(op: string, key: IpvsServiceKey, dest: IpvsDestinationKey): { stored: StoredService; index: number } {
    const stored = this.find(op, key);
    const index = stored.destinations.findIndex((d) => sameDestinationKey(d, dest));
    if (index < 0) throw ipvsError(op, errnoNumber('ENOENT'), { service: key, destination: dest });
    return { stored, index };
  }

  listServices(): Promise<IpvsService[]> {
    return this.run('listServices', () => this.services.map((s) => copyService(s.service)));
  }

  listDestinations(service: IpvsServiceKey): Promise<IpvsDestination[]> {
    return this.run('listDestinations', (op) => {
      checkServiceKey(op, service);
      return this.find(op, service).destinations.map((d) => ({ ...d }));
    });
  }

  setDestinationWeight(service: IpvsServiceKey, destination: IpvsDestinationKey, weight: number): Promise<void> {
    return this.run('setDestinationWeight', (op) => {
      checkServiceKey(op, service);
      checkDestinationKey(op, service, destination);
      checkWeight(op, weight);
      const { stored, index } = this.findDest(op, service, destination);
      const current = stored.destinations[index];
      if (current !== undefined) stored.destinations[index] = { ...current, weight };
      this.history.push({ op, service, destination, weight });
    });
  }

  /** As the addon: arguments checked first (one bad edit rejects all), then each edit in order. */
  setDestinationWeights(edits: readonly IpvsWeightEdit[]): Promise<Array<NetlinkError | undefined>> {
    return this.run('setDestinationWeights', (op) => {
      for (const e of edits) {
        checkServiceKey(op, e.service);
        checkDestinationKey(op, e.service, e.destination);
        checkWeight(op, e.weight);
      }
      return edits.map((e) => {
        try {
          const { stored, index } = this.findDest(op, e.service, e.destination);
          const current = stored.destinations[index];
          if (current !== undefined) stored.destinations[index] = { ...current, weight: e.weight };
          this.history.push({ op: 'setDestinationWeight', service: e.service, destination: e.destination, weight: e.weight });
          return undefined;
        } catch (error) {
          if (error instanceof NetlinkError) return error;
          throw error;
        }
      });
    });
  }

  addDestination(service: IpvsServiceKey, destination: IpvsDestinationSpec): Promise<void> {
    return this.run('addDestination', (op) => {
      checkServiceKey(op, service);
      checkDestinationSpec(op, service, destination);
      const stored = this.find(op, service);
      const family = addressFamily(destination.address) ?? service.family;
      const forwarding = destination.forwarding ?? 'masq';
      const context = { service, destination };
      // ip_vs_genl_set_cmd: mixed families only for the tunnel method.
      if (family !== service.family && forwarding !== 'tunnel') throw ipvsError(op, errnoNumber('EINVAL'), context);
      // ip_vs_add_dest: a GUE tunnel needs its port; lower threshold above upper is ERANGE.
      if (destination.tunnelType === 'gue' && (destination.tunnelPort ?? 0) === 0) throw ipvsError(op, errnoNumber('EINVAL'), context);
      if ((destination.lowerThreshold ?? 0) > (destination.upperThreshold ?? 0)) throw ipvsError(op, errnoNumber('ERANGE'), context);
      if (stored.destinations.some((d) => sameDestinationKey(d, destination))) throw ipvsError(op, errnoNumber('EEXIST'), context);
      stored.destinations.unshift({
        address: canonicalAddress(destination.address),
        port: destination.port,
        family,
        forwarding,
        weight: destination.weight,
        upperThreshold: destination.upperThreshold ?? 0,
        lowerThreshold: destination.lowerThreshold ?? 0,
        tunnelType: destination.tunnelType ?? 'ipip',
        tunnelPort: destination.tunnelPort ?? 0,
        tunnelFlags: destination.tunnelFlags ?? 0,
        activeConnections: 0,
        inactiveConnections: 0,
        persistentConnections: 0,
      });
      this.history.push({ op, service, destination, weight: destination.weight });
    });
  }

  deleteDestination(service: IpvsServiceKey, destination: IpvsDestinationKey): Promise<void> {
    return this.run('deleteDestination', (op) => {
      checkServiceKey(op, service);
      checkDestinationKey(op, service, destination);
      const { stored, index } = this.findDest(op, service, destination);
      stored.destinations.splice(index, 1);
      this.history.push({ op, service, destination });
    });
  }

  addService(spec: IpvsServiceSpec): Promise<void> {
    return this.run('addService', (op) => {
      checkServiceSpec(op, spec);
      if (this.byKey.has(serviceLookupKey(spec.key))) throw ipvsError(op, errnoNumber('EEXIST'), { service: spec.key });
      if (!this.schedulers.has(spec.scheduler)) throw ipvsError(op, errnoNumber('ENOENT'), { service: spec.key, scheduler: spec.scheduler });
      const flags = ((spec.flags ?? 0) | IPVS_SVC_F_HASHED) >>> 0;
      const stored: StoredService = {
        service: {
          key: canonicalServiceKey(spec.key),
          scheduler: spec.scheduler,
          flags,
          flagNames: ipvsFlagNames(flags),
          timeout: spec.timeout ?? 0,
          netmask: spec.netmask ?? defaultNetmask(spec.key.family),
        },
        destinations: [],
      };
      this.services.push(stored);
      this.byKey.set(serviceLookupKey(spec.key), stored);
      this.history.push({ op, service: spec.key });
    });
  }

  deleteService(service: IpvsServiceKey): Promise<void> {
    return this.run('deleteService', (op) => {
      checkServiceKey(op, service);
      const stored = this.find(op, service);
      this.services.splice(this.services.indexOf(stored), 1);
      this.byKey.delete(serviceLookupKey(service));
      this.history.push({ op, service });
    });
  }

  // ---- simulations for tests ----------------------------------------------------------

  /** The service proxy deletes a real server (as kube-proxy does when an endpoint goes away). */
  proxyDeleteDestination(service: IpvsServiceKey, destination: IpvsDestinationKey): void {
    const { stored, index } = this.findDest('proxyDeleteDestination', service, destination);
    stored.destinations.splice(index, 1);
  }

  /** The service proxy rewrites a weight (e.g. back to 1 on its next sync). */
  proxySetWeight(service: IpvsServiceKey, destination: IpvsDestinationKey, weight: number): void {
    const { stored, index } = this.findDest('proxySetWeight', service, destination);
    const current = stored.destinations[index];
    if (current !== undefined) stored.destinations[index] = { ...current, weight };
  }

  /** Sets a destination's connection counters (the kernel's active/inactive/persistent). */
  setConnections(service: IpvsServiceKey, destination: IpvsDestinationKey, counts: { active?: number; inactive?: number; persistent?: number }): void {
    const { stored, index } = this.findDest('setConnections', service, destination);
    const current = stored.destinations[index];
    if (current === undefined) return;
    stored.destinations[index] = {
      ...current,
      activeConnections: counts.active ?? current.activeConnections,
      inactiveConnections: counts.inactive ?? current.inactiveConnections,
      persistentConnections: counts.persistent ?? current.persistentConnections,
    };
  }

  /** Runs an operation like the addon does: asynchronously, errors as rejections. */
  private run<T>(op: string, body: (op: string) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queueMicrotask(() => {
        try {
          this.enter(op);
          resolve(body(op));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }
}
