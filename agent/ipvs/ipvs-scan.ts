/** Reading the node's IPVS services and their real servers, a bounded number of calls at a time. */
import type { IpvsApi, IpvsDestination, IpvsService } from 'netlink-native/types';
import { mapLimit } from '../../src/map-limit.js';
import { isCode } from './netlink-code.js';

/** A service and its servers (undefined: deleted while it was read). */
export interface ListedService {
  service: IpvsService;
  dests: IpvsDestination[] | undefined;
}

/** The servers of each of `services` (undefined for one deleted meanwhile). */
export function listServers(ipvs: IpvsApi, services: readonly IpvsService[], concurrency: number): Promise<ListedService[]> {
  return mapLimit(services, concurrency, async (service) => {
    try {
      return { service, dests: await ipvs.listDestinations(service.key) };
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ESRCH')) return { service, dests: undefined }; // deleted meanwhile
      throw error;
    }
  });
}
