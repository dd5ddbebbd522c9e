import type { Logger } from 'pino';
import { formatServiceKey } from 'netlink-native/ipvs-keys';
import { holdLogLevel, type HeldServer } from './held-server.js';

/** Servers newly held at weight 0 in one step, logged as one line per pod (1,000 services: not 1,000 lines). */
export class HoldReport {
  private readonly byPod = new Map<string, HeldServer[]>();

  add(held: HeldServer): void {
    let list = this.byPod.get(held.podKey);
    if (list === undefined) this.byPod.set(held.podKey, (list = []));
    list.push(held);
  }

  log(logger: Logger): void {
    for (const [pod, list] of this.byPod) {
      const ips = [...new Set(list.map((h) => h.destination.address))];
      const services = list.slice(0, 10).map((h) => `${formatServiceKey(h.service)} (was ${h.originalWeight})`);
      logger[holdLogLevel(list[0] ?? {})]({ pod, ips, servers: list.length, services, more: Math.max(0, list.length - services.length) }, `ipvs: holding ${list.length} real server(s) at weight 0`);
    }
  }
}
