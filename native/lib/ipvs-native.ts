/**
 * The IPVS half of the addon wrapper: checks arguments (ipvs-keys.ts, the same checks as the
 * stand-in), converts names to the kernel's numbers for the `ipvs_*` ops of ipvs_napi.c, converts
 * their raw results back, and turns their errno into the same NetlinkErrors as the stand-in.
 * NativeNetlink (index.ts) delegates its IpvsApi methods here.
 */
import { IPVS_PROTOCOLS, NetlinkError, PROTOCOL_NUMBERS, type IpvsApi, type IpvsDestination, type IpvsDestinationKey, type IpvsDestinationSpec, type IpvsForwarding, type IpvsService, type IpvsServiceKey, type IpvsServiceSpec, type IpvsWeightEdit } from './types.js';
import { addressFamily, checkDestinationKey, checkDestinationSpec, checkServiceKey, checkServiceSpec, checkWeight, ipvsFlagNames, IPVS_FORWARDINGS, IPVS_TUNNEL_TYPES } from './ipvs-keys.js';
import { ipvsError, ipvsUnavailable, IPVS_UNAVAILABLE_CODE, type IpvsErrorContext } from './ipvs-errors.js';

/** Calls one addon op: (public op name, native op name, args) -> raw result. */
export type InvokeOp = (op: string, native: string, args: object) => Promise<unknown>;


interface RawServiceKey { family: number; fwmark?: number; protocol?: number; address?: string; port?: number }
interface RawService { family: number; fwmark: number; protocol?: number; address?: string; port?: number; scheduler: string; flags: number; timeout: number; netmask: number }
interface RawDestination {
  address: string; port: number; family: number; fwd: number; weight: number; uThresh: number; lThresh: number;
  tunType: number; tunPort: number; tunFlags: number; active: number; inactive: number; persistent: number;
}

function toRawKey(key: IpvsServiceKey): RawServiceKey {
  if (key.fwmark !== undefined) return { family: key.family, fwmark: key.fwmark };
  return { family: key.family, protocol: PROTOCOL_NUMBERS[key.protocol], address: key.address, port: key.port };
}

function toRawDestinationKey(dest: IpvsDestinationKey): { address: string; port: number; family: number } {
  return { address: dest.address, port: dest.port, family: dest.family ?? addressFamily(dest.address) ?? 4 };
}

function toRawDestination(dest: IpvsDestinationSpec): object {
  return {
    ...toRawDestinationKey(dest),
    fwd: IPVS_FORWARDINGS.indexOf(dest.forwarding ?? 'masq'),
    weight: dest.weight,
    uThresh: dest.upperThreshold ?? 0,
    lThresh: dest.lowerThreshold ?? 0,
    tunType: IPVS_TUNNEL_TYPES.indexOf(dest.tunnelType ?? 'ipip'),
    tunPort: dest.tunnelPort ?? 0,
    tunFlags: dest.tunnelFlags ?? 0,
  };
}

function fromRawService(raw: RawService): IpvsService {
  const family = raw.family === 6 ? 6 : 4;
  let key: IpvsServiceKey;
  if (raw.fwmark !== 0) {
    key = { family, fwmark: raw.fwmark };
  } else {
    const protocol = IPVS_PROTOCOLS.find((name) => PROTOCOL_NUMBERS[name] === raw.protocol);
    if (protocol === undefined) throw new NetlinkError('listServices', 71, 'EPROTO', `the kernel listed a service with protocol ${String(raw.protocol)}`);
    key = { family, protocol, address: raw.address ?? '', port: raw.port ?? 0 };
  }
  return { key, scheduler: raw.scheduler, flags: raw.flags, flagNames: ipvsFlagNames(raw.flags), timeout: raw.timeout, netmask: raw.netmask };
}

function fromRawDestination(raw: RawDestination): IpvsDestination {
  return {
    address: raw.address,
    port: raw.port,
    family: raw.family === 6 ? 6 : 4,
    forwarding: IPVS_FORWARDINGS[raw.fwd] ?? ('masq' satisfies IpvsForwarding),
    weight: raw.weight,
    upperThreshold: raw.uThresh,
    lowerThreshold: raw.lThresh,
    tunnelType: IPVS_TUNNEL_TYPES[raw.tunType] ?? 'ipip',
    tunnelPort: raw.tunPort,
    tunnelFlags: raw.tunFlags,
    activeConnections: raw.active,
    inactiveConnections: raw.inactive,
    persistentConnections: raw.persistent,
  };
}

export class NativeIpvs implements IpvsApi {
  constructor(private readonly invoke: InvokeOp) {}

  /** Runs an op and gives kernel errors the stand-in's wording (with service/destination). */
  private async call(op: string, native: string, args: object, context: IpvsErrorContext): Promise<unknown> {
    try {
      return await this.invoke(op, native, args);
    } catch (error) {
      if (!(error instanceof NetlinkError)) throw error;
      if (error.code === IPVS_UNAVAILABLE_CODE) throw ipvsUnavailable(op);
      if (['ESRCH', 'ENOENT', 'EEXIST', 'EINVAL', 'ERANGE', 'EPERM'].includes(error.code)) throw ipvsError(op, error.errno, context);
      throw error;
    }
  }

  async listServices(): Promise<IpvsService[]> {
    const raw = (await this.call('listServices', 'ipvs_list_services', {}, {})) as RawService[];
    return raw.map(fromRawService);
  }

  async listDestinations(service: IpvsServiceKey): Promise<IpvsDestination[]> {
    checkServiceKey('listDestinations', service);
    const raw = (await this.call('listDestinations', 'ipvs_list_destinations', { service: toRawKey(service) }, { service })) as RawDestination[];
    return raw.map(fromRawDestination);
  }

  async setDestinationWeight(service: IpvsServiceKey, destination: IpvsDestinationKey, weight: number): Promise<void> {
    const op = 'setDestinationWeight';
    checkServiceKey(op, service);
    checkDestinationKey(op, service, destination);
    checkWeight(op, weight);
    await this.call(op, 'ipvs_set_weight', { service: toRawKey(service), destination: toRawDestinationKey(destination), weight }, { service, destination });
  }

  async setDestinationWeights(edits: readonly IpvsWeightEdit[]): Promise<Array<NetlinkError | undefined>> {
    const op = 'setDestinationWeights';
    for (const e of edits) {
      checkServiceKey(op, e.service);
      checkDestinationKey(op, e.service, e.destination);
      checkWeight(op, e.weight);
    }
    if (edits.length === 0) return [];
    const raw = edits.map((e) => ({ service: toRawKey(e.service), destination: toRawDestinationKey(e.destination), weight: e.weight }));
    const errnos = (await this.call(op, 'ipvs_set_weights', { edits: raw }, {})) as number[];
    return edits.map((e, i) => {
      const errno = errnos[i] ?? 0;
      return errno === 0 ? undefined : ipvsError(op, errno, { service: e.service, destination: e.destination });
    });
  }

  async addDestination(service: IpvsServiceKey, destination: IpvsDestinationSpec): Promise<void> {
    const op = 'addDestination';
    checkServiceKey(op, service);
    checkDestinationSpec(op, service, destination);
    await this.call(op, 'ipvs_add_destination', { service: toRawKey(service), destination: toRawDestination(destination) }, { service, destination });
  }

  async deleteDestination(service: IpvsServiceKey, destination: IpvsDestinationKey): Promise<void> {
    const op = 'deleteDestination';
    checkServiceKey(op, service);
    checkDestinationKey(op, service, destination);
    await this.call(op, 'ipvs_delete_destination', { service: toRawKey(service), destination: toRawDestinationKey(destination) }, { service, destination });
  }

  async addService(spec: IpvsServiceSpec): Promise<void> {
    checkServiceSpec('addService', spec);
    const args = { service: toRawKey(spec.key), scheduler: spec.scheduler, flags: spec.flags, timeout: spec.timeout, netmask: spec.netmask };
    const context: IpvsErrorContext = { service: spec.key };
    try {
      await this.call('addService', 'ipvs_add_service', args, context);
    } catch (error) {
      // ip_vs_add_service: ENOENT means ip_vs_scheduler_get found no such scheduler module.
      if (error instanceof NetlinkError && error.code === 'ENOENT') throw ipvsError('addService', error.errno, { ...context, scheduler: spec.scheduler });
      throw error;
    }
  }

  async deleteService(service: IpvsServiceKey): Promise<void> {
    checkServiceKey('deleteService', service);
    await this.call('deleteService', 'ipvs_delete_service', { service: toRawKey(service) }, { service });
  }
}
