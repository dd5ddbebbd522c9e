/** Reading the node's IPVS services and their real servers, a bounded number of calls at a time. */
import { setImmediate } from 'node:timers/promises';
import type { IpvsApi, IpvsDestination, IpvsService } from 'netlink-native/types';
import { mapLimit } from '../../src/map-limit.js';
import { isCode } from './netlink-code.js';

/** A service and its servers (undefined: deleted while it was read). */
export interface ListedService {
  service: IpvsService;
  dests: IpvsDestination[] | undefined;
}

/**
 * Services read between two turns of the event loop. A scan reads every service (2,000 on a
 * node of a large cluster); a dump that answers at once (a stand-in, a cached answer) would
 * otherwise chain them all into one task and hold every watch event behind the whole scan.
 */
const SERVICES_PER_TURN = 32;

/**
 * Reads the servers of each of `services` and hands each service's to `visit` as soon as they
 * are read (in the order the reads end), keeping none: a scan of a node whose proxy runs in
 * IPVS mode (a real server per endpoint of every Service) holds one service's dump at a time,
 * not the whole table.
 */
export async function visitServers(ipvs: IpvsApi, services: readonly IpvsService[], concurrency: number, visit: (service: IpvsService, dests: IpvsDestination[] | undefined) => void): Promise<void> {
  let read = 0;
  await mapLimit(services, concurrency, async (service) => {
    read += 1;
    if (read % SERVICES_PER_TURN === 0) await setImmediate();
    let dests: IpvsDestination[] | undefined;
    try {
      dests = await ipvs.listDestinations(service.key);
    } catch (error) {
      if (!isCode(error, 'ENOENT', 'ESRCH')) throw error;
      dests = undefined; // deleted meanwhile
    }
    visit(service, dests);
  });
}
