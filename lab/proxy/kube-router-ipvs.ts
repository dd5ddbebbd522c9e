import type { IpvsApi, IpvsServiceKey } from 'netlink-native/types';
import type { ServiceState } from './service.js';

/**
 * A stand-in for kube-router's IPVS service proxy with DSR and Maglev, per node:
 * - one virtual service per port, scheduler `mh` with flags `mh-fallback,mh-port`
 *   (IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2), real servers in tunnel (IPIP) mode;
 * - when an endpoint turns unready, each node decides alone (kube-router's graceful
 *   termination): a node whose IPVS still has connections to it sets its weight to 0, every
 *   other node deletes it at once. That difference is what makes Maglev tables drift and a
 *   flow's new node not know the pod.
 * Programmed through netlink-native's IPVS ops (the addon), never by parsing ipvsadm.
 */
export const MH_FALLBACK = 0x0008;
export const MH_PORT = 0x0010;

export function serviceKeys(service: ServiceState): IpvsServiceKey[] {
  return service.ports.filter((port) => port.protocol === 'tcp' || port.protocol === 'udp').map((port) => ({ family: 4, protocol: port.protocol, address: service.address, port: port.port }));
}

/** Creates the service and its real servers (weight 1, tunnel), in endpoint order. */
export async function programIpvsService(ipvs: IpvsApi, service: ServiceState): Promise<void> {
  for (const [index, key] of serviceKeys(service).entries()) {
    await ipvs.addService({ key, scheduler: 'mh', flags: MH_FALLBACK | MH_PORT });
    const targetPort = service.ports[index]?.targetPort ?? key.port ?? 0;
    for (const endpoint of service.endpoints) {
      await ipvs.addDestination(key, { address: endpoint.ip, port: targetPort, forwarding: 'tunnel', tunnelType: 'ipip', weight: 1 });
    }
  }
}

export type DrainDecision = 'weight-0' | 'deleted' | 'absent';

/**
 * What kube-router does on one node when the endpoint `ip` turns unready: weight 0 while the
 * node's IPVS has connections to it (active or inactive), deleted otherwise.
 */
export async function removeUnreadyEndpoint(ipvs: IpvsApi, service: ServiceState, ip: string): Promise<DrainDecision> {
  let decision: DrainDecision = 'absent';
  for (const key of serviceKeys(service)) {
    const destination = (await ipvs.listDestinations(key)).find((candidate) => candidate.address === ip);
    if (destination === undefined) continue;
    if (destination.activeConnections + destination.inactiveConnections > 0) {
      await ipvs.setDestinationWeight(key, destination, 0);
      decision = 'weight-0';
    } else {
      await ipvs.deleteDestination(key, destination);
      if (decision === 'absent') decision = 'deleted';
    }
  }
  return decision;
}

/**
 * kube-router's stale-config cleanup on a sync (`cleanupStaleIPVSConfig`): every IPVS service it
 * did not program is deleted, fwmark services included, so conndrain's twins go too (see
 * agent/ipvs/flowpin/README.md). Returns how many services it deleted.
 */
export async function cleanupStaleServices(ipvs: IpvsApi, services: readonly ServiceState[]): Promise<number> {
  const own = new Set(services.flatMap(serviceKeys).map((key) => `${key.protocol}/${key.address}/${key.port}`));
  let deleted = 0;
  for (const service of await ipvs.listServices()) {
    const key = service.key;
    if (key.fwmark === undefined && own.has(`${key.protocol}/${key.address}/${key.port}`)) continue;
    await ipvs.deleteService(key);
    deleted += 1;
  }
  return deleted;
}
