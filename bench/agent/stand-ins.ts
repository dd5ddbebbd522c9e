/** The in-memory netlink stand-ins (native/lib) combined into one NetlinkApi-shaped object for the bench. */
import { MemoryConntrack } from '../../native/lib/memory-conntrack.js';
import { MemoryIpvs } from '../../native/lib/memory-ipvs.js';
import type { ConntrackApi, IpvsApi } from '../../native/lib/types.js';

export function memoryNetlink(ct: MemoryConntrack, ipvs: MemoryIpvs): ConntrackApi & IpvsApi {
  return {
    deleteConntrack: (o) => ct.deleteConntrack(o), deleteConntrackEntries: (e) => ct.deleteConntrackEntries(e), listConntrack: (o) => ct.listConntrack(o), scanDnatEntries: (o) => ct.scanDnatEntries(o), conntrackStats: () => ct.conntrackStats(),
    listServices: () => ipvs.listServices(), listDestinations: (s) => ipvs.listDestinations(s), setDestinationWeight: (s, d, w) => ipvs.setDestinationWeight(s, d, w),
    addDestination: (s, d) => ipvs.addDestination(s, d), deleteDestination: (s, d) => ipvs.deleteDestination(s, d), addService: (s) => ipvs.addService(s), deleteService: (s) => ipvs.deleteService(s),
  };
}
