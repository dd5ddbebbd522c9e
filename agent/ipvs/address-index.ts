/**
 * The node's IPVS real servers by address, and each service's servers in dump order, from the
 * last full scan: when a pod starts draining, its known servers are edited to 0 at once, before
 * the full scan (1,000 services = 1,000 netlink round trips) that catches the rest.
 */
import type { IpvsDestination, IpvsService } from 'netlink-native/types';
import { formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import { heldId, type HeldServer } from './held-server.js';
import type { ListedService } from './ipvs-scan.js';

export interface IndexedServer {
  service: IpvsService;
  dest: IpvsDestination;
}

export class AddressIndex {
  private servers = new Map<string, IndexedServer[]>();
  /** Each service's servers in dump order (see HeldServer.serviceOrder). */
  private orders = new Map<string, string[]>();

  /** Replaces both with what a full scan listed. */
  rebuild(listed: readonly ListedService[]): void {
    const index = new Map<string, IndexedServer[]>();
    for (const { service, dests } of listed) {
      for (const dest of dests ?? []) {
        const ip = dest.address.toLowerCase();
        let list = index.get(ip);
        if (list === undefined) index.set(ip, (list = []));
        list.push({ service, dest });
      }
    }
    this.servers = index;
    this.orders = new Map(listed.filter((l) => l.dests !== undefined).map((l) => [formatServiceKey(l.service.key), (l.dests ?? []).map(formatDestinationKey)]));
  }

  /** The servers with address `ip` (any case), as the last scan saw them. */
  at(ip: string): readonly IndexedServer[] {
    return this.servers.get(ip.toLowerCase()) ?? [];
  }

  /** The service's servers in the last scan's dump order. */
  orderOf(id: string): string[] | undefined {
    return this.orders.get(id);
  }

  /**
   * Keeps the index's weight of a released server current: its next drain takes the original
   * weight to restore from the index, and the index's last scan may date from the drain (0).
   */
  rememberWeight(held: HeldServer, weight: number): void {
    const id = heldId(held.service, held.destination);
    for (const entry of this.servers.get(held.destination.address.toLowerCase()) ?? []) {
      if (heldId(entry.service.key, entry.dest) === id) entry.dest = { ...entry.dest, weight };
    }
  }
}
