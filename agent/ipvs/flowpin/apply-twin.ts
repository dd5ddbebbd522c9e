/**
 * Makes one twin IPVS service in the kernel match its plan through netlink-native:
 * - a new twin is added, then its real servers in REVERSE dump order (the kernel prepends on
 *   add, ip_vs_ctl.c `__ip_vs_update_dest`: `list_add_rcu(&dest->n_list, &svc->destinations)`),
 *   so its list order, and with it the mh/sh lookup table, equals the original's;
 * - an existing twin only gets the servers it lacks, loses those not wanted, and weight edits:
 *   while it carries connections it is never rebuilt, because deleting a server (or the
 *   service) unlinks it and ip_vs_in_hook then drops packets of the connections it carries;
 *   an idle twin whose list order is not the planned one is deleted and re-created.
 */
import type { Logger } from 'pino';
import { formatDestinationKey as id } from 'netlink-native/ipvs-keys';
import type { IpvsApi, IpvsDestination } from 'netlink-native/types';
import { isCode } from '../netlink-code.js';
import type { TwinPlan } from '../../../src/flowpin/twin-plan.js';

export interface TwinChange {
  created: boolean;
  added: number;
  removed: number;
  reweighted: number;
  /** The twin's list order differs from the plan's (servers added later land at the head). */
  orderDiffers: boolean;
}


function sameOrder(current: readonly IpvsDestination[], twin: TwinPlan): boolean {
  return current.map(id).join(',') === twin.destinations.map((d) => id(d.spec)).join(',');
}

function carriesNothing(current: readonly IpvsDestination[]): boolean {
  return current.every((d) => d.activeConnections + d.inactiveConnections === 0);
}

export async function applyTwin(ipvs: IpvsApi, twin: TwinPlan, wasPresent: boolean, log: Logger): Promise<TwinChange> {
  let present = wasPresent;
  const key = twin.spec.key;
  const change: TwinChange = { created: false, added: 0, removed: 0, reweighted: 0, orderDiffers: false };
  let current: IpvsDestination[] = [];
  if (present) {
    current = await ipvs.listDestinations(key);
    if (twin.state === 'active' && !sameOrder(current, twin) && carriesNothing(current)) {
      // An idle twin whose list order is not the planned one (its servers were added at
      // different times): rebuilt, so its table is the pre-drain one. One that carries
      // connections is never rebuilt (deleting unlinks the servers its flows are bound to).
      await ipvs.deleteService(key);
      log.info({ twin: twin.id, fwmark: twin.fwmark, listed: current.map(id), planned: twin.destinations.map((d) => id(d.spec)) }, 'flowpin: idle twin not in the planned order; rebuilt');
      current = [];
      present = false;
    }
  }
  if (!present) {
    if (twin.state !== 'active') return change;
    await ipvs.addService(twin.spec);
    change.created = true;
  }
  const want = new Set(twin.destinations.map((d) => id(d.spec)));
  for (const d of current) {
    if (want.has(id(d))) continue;
    try {
      await ipvs.deleteDestination(key, d);
      change.removed++;
    } catch (error) {
      if (!isCode(error, 'ENOENT', 'ESRCH')) throw error;
    }
  }
  if (twin.state === 'active') {
    const have = new Map(current.map((d) => [id(d), d]));
    const missing = twin.destinations.filter((d) => !have.has(id(d.spec)));
    for (const d of [...missing].reverse()) {
      try {
        await ipvs.addDestination(key, d.spec);
        change.added++;
      } catch (error) {
        if (!isCode(error, 'EEXIST')) throw error;
      }
    }
    for (const d of twin.destinations) {
      const now = have.get(id(d.spec))?.weight ?? d.spec.weight;
      if (now === d.weight) continue;
      await ipvs.setDestinationWeight(key, d.spec, d.weight);
      change.reweighted++;
    }
    if (change.added > 0 && !change.created) {
      const listed = (await ipvs.listDestinations(key)).map(id);
      change.orderDiffers = listed.join(',') !== twin.destinations.map((d) => id(d.spec)).join(',');
      if (change.orderDiffers) log.warn({ twin: twin.id, fwmark: twin.fwmark, listed, planned: twin.destinations.map((d) => id(d.spec)) }, 'flowpin: servers added to an existing twin sit at the head of its list; its table may differ from the original for some slots');
    }
  }
  return change;
}
