/** The in-memory conntrack stand-in with an IPVS (the in-memory one, or the kernel's through netlink-native) as one object for the bench. */
import { MemoryConntrack } from 'netlink-native/memory';
import type { ConntrackApi, IpvsApi } from 'netlink-native/types';

export function memoryNetlink(ct: MemoryConntrack, ipvs: IpvsApi): ConntrackApi & IpvsApi {
  return {
    deleteConntrack: (o) => ct.deleteConntrack(o), deleteConntrackEntries: (e) => ct.deleteConntrackEntries(e), listConntrack: (o) => ct.listConntrack(o), scanDnatEntries: (o) => ct.scanDnatEntries(o), conntrackStats: () => ct.conntrackStats(),
    ...forwardIpvs(ipvs),
  };
}

/** A plain object forwarding every IpvsApi method to `ipvs`: the bench may replace its methods without touching `ipvs`. */
export function forwardIpvs(ipvs: IpvsApi): IpvsApi {
  return {
    listServices: () => ipvs.listServices(), listDestinations: (s) => ipvs.listDestinations(s), setDestinationWeight: (s, d, w) => ipvs.setDestinationWeight(s, d, w), setDestinationWeights: (e) => ipvs.setDestinationWeights(e),
    addDestination: (s, d) => ipvs.addDestination(s, d), deleteDestination: (s, d) => ipvs.deleteDestination(s, d), addService: (s) => ipvs.addService(s), deleteService: (s) => ipvs.deleteService(s),
  };
}
