/**
 * Flow pinning, planned (pure): for every `mh`/`sh` IPVS service in which the hold keeps a
 * draining pod at weight 0, a TWIN service keyed by a conndrain firewall mark with the same
 * scheduler, flags and real servers in the same list order, the draining pods at their
 * ORIGINAL weight. The nftables rules (nft-ruleset.ts) send the service's TCP packets without
 * SYN to the twin; SYNs keep going to the original service.
 *
 * Why the twin's table is the pre-drain table, on every node (Linux net/netfilter/ipvs/):
 * - ip_vs_mh.c `generate_hash_secret` sets fixed hsiphash keys (2654435761 / 2654446892), so
 *   `ip_vs_mh_permutate` gives each real server the same offset/skip on every node;
 *   `ip_vs_mh_populate` walks `svc->destinations` in list order and gives each server
 *   `last_weight / gcd >> rshift` turns: same servers, same order, same weights -> same table.
 *   (`last_weight` is why the hold EDITS weight to 0: an edit keeps last_weight, so the
 *   original's slots do not move; `is_unavailable` (weight <= 0) then only refuses the pod.)
 * - ip_vs_sh.c `ip_vs_sh_reassign` fills 256 buckets walking the same list, `weight` buckets
 *   per server: the twin at the original weights is the pre-drain `sh` table.
 * - ip_vs_ctl.c `__ip_vs_update_dest` adds a server with `list_add_rcu(&dest->n_list,
 *   &svc->destinations)`, i.e. at the HEAD, and the netlink dump walks from the head: the dump
 *   order is newest first, so the applier adds the twin's servers in REVERSE dump order.
 * - "Same order" means the order BEFORE the drain: a proxy that deleted the draining server on
 *   this node (kube-router on a node without connections to it) and the hold that re-added it
 *   moved it to the head here; the hold records the pre-drain order (HeldRef.serviceOrder) and
 *   the twin follows that, with the deleted server included even before the hold re-adds it.
 *
 * Lifecycle of a twin (its registry entry lives in conndrain's nftables table):
 * - `active` while a held, eligible service needs it (rule + twin);
 * - `retiring` once nothing needs it: the rule is gone (no new packet reaches the twin), the
 *   twin stays while IPVS connection entries it created still carry flows (deleting a service
 *   unlinks its servers and ip_vs_in_hook drops packets of connections to an unavailable
 *   server), minus the servers the original no longer has (pods gone: their flows are dead);
 * - `delete` when it carries no connection: the applier deletes it and the next pass forgets it.
 */
import { allocateMarks, inRange, type FwmarkRange } from './fwmark-range.js';
import { destinationSpecOf, formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import type { IpvsDestination, IpvsDestinationSpec, IpvsService, IpvsServiceKey, IpvsServiceSpec } from 'netlink-native/types';
import type { HeldRef, ServiceSnapshot } from './types.js';

/** Schedulers with a consistent-hash table a twin can reproduce. */
export const PINNABLE_SCHEDULERS: readonly string[] = ['mh', 'sh'];

/** Weight kube-proxy and kube-router give every endpoint: the assumed last_weight of a server found at 0. */
export const ASSUMED_LAST_WEIGHT = 1;

export type TwinState = 'active' | 'retiring' | 'delete';

/** One twin as recorded in conndrain's nftables table (see nft-ruleset.ts). */
export interface RegistryEntry {
  original: IpvsServiceKey;
  fwmark: number;
}

/** A twin's server says every field (the original's, copied), so the twin's table matches. */
export type TwinDestinationSpec = Required<IpvsDestinationSpec>;

/** A twin is an fwmark service with every field of the original's. */
export type TwinServiceSpec = Required<IpvsServiceSpec> & { key: Extract<IpvsServiceKey, { fwmark: number }> };

export interface TwinDestination {
  /** Added with this spec (its weight becomes the server's last_weight)... */
  spec: TwinDestinationSpec;
  /** ...then edited to this weight when it differs (a server the proxy itself keeps at 0). */
  weight: number;
}

export interface TwinPlan {
  id: string;
  original: IpvsServiceKey;
  fwmark: number;
  state: TwinState;
  spec: TwinServiceSpec;
  /** Wanted servers in the original's dump order (newest first). Retiring: what is kept. */
  destinations: TwinDestination[];
  /** Keys of the draining pods whose flows the twin pins. */
  pods: string[];
  /** IPVS connection entries on the kept servers of an existing twin (0 for a new one). */
  connections: number;
}

export type SkipReason = 'scheduler' | 'protocol' | 'opted-out' | 'original-missing';

export interface FlowpinPlan {
  twins: TwinPlan[];
  skipped: { id: string; reason: SkipReason; detail: string }[];
  /** Services that found no free mark in the range. */
  exhausted: string[];
  /** fwmark services inside the range that conndrain did not create (their marks are skipped). */
  foreign: number[];
}

export interface FlowpinInput {
  range: FwmarkRange;
  /** Every IPVS service of the node with its servers (twins included). */
  services: readonly ServiceSnapshot[];
  /** Servers the hold keeps at weight 0. */
  held: readonly HeldRef[];
  /** Twins recorded in conndrain's table. */
  registry: readonly RegistryEntry[];
  /** Pods whose owners turned flow pinning off (annotation). */
  optOutPodUids?: ReadonlySet<string>;
}

/** The key with its address lower-cased (the kernel and the registry spell IPv6 that way). */
function normalizeKey(key: IpvsServiceKey): IpvsServiceKey {
  return key.fwmark !== undefined ? { family: key.family, fwmark: key.fwmark } : { family: key.family, protocol: key.protocol, address: key.address.toLowerCase(), port: key.port };
}

function twinSpec(original: IpvsService, fwmark: number): TwinServiceSpec {
  return { key: { family: original.key.family, fwmark }, scheduler: original.scheduler, flags: original.flags, timeout: original.timeout, netmask: original.netmask };
}

function eligibility(service: IpvsService): { reason: SkipReason; detail: string } | undefined {
  if (!PINNABLE_SCHEDULERS.includes(service.scheduler)) {
    return { reason: 'scheduler', detail: `scheduler ${service.scheduler} has no consistent-hash table to reproduce (only ${PINNABLE_SCHEDULERS.join(', ')})` };
  }
  if (service.key.fwmark === undefined && service.key.protocol !== 'tcp') {
    return { reason: 'protocol', detail: `${service.key.protocol} service: flow pinning splits flows by the TCP SYN flag (TCP only)` };
  }
  return undefined;
}

function connectionsOf(destinations: readonly IpvsDestination[]): number {
  return destinations.reduce((sum, d) => sum + d.activeConnections + d.inactiveConnections, 0);
}

/** Held servers the proxy deleted from the original (the hold re-adds them): the twin has them at their original weight. */
function deletedHeld(held: readonly HeldRef[], present: readonly IpvsDestination[]): TwinDestination[] {
  const ids = new Set(present.map(formatDestinationKey));
  const out: TwinDestination[] = [];
  for (const h of held) {
    if (h.spec === undefined || ids.has(formatDestinationKey(h.destination))) continue;
    ids.add(formatDestinationKey(h.destination));
    const spec = h.spec;
    out.push({
      spec: {
        address: spec.address, port: spec.port, family: spec.family ?? (spec.address.includes(':') ? 6 : 4), forwarding: spec.forwarding ?? 'masq', weight: h.originalWeight,
        upperThreshold: spec.upperThreshold ?? 0, lowerThreshold: spec.lowerThreshold ?? 0, tunnelType: spec.tunnelType ?? 'ipip', tunnelPort: spec.tunnelPort ?? 0, tunnelFlags: spec.tunnelFlags ?? 0,
      },
      weight: h.originalWeight,
    });
  }
  return out;
}

/**
 * The twin's servers in the original's list order BEFORE the drain (the hold's record of it),
 * not the kernel's order now: a server the proxy deleted and the hold re-added sits at the head
 * now, which changes the mh/sh table. Servers the record does not know (added since) go first,
 * as the kernel would have put them. Without a record: the order as listed.
 */
function preDrainOrder(held: readonly HeldRef[], destinations: TwinDestination[]): TwinDestination[] {
  const order = held.find((h) => h.serviceOrder !== undefined)?.serviceOrder;
  if (order === undefined) return destinations;
  const rank = new Map(order.map((id, index) => [recordedKey(id), index]));
  return destinations
    .map((d, index) => ({ d, index, rank: rank.get(formatDestinationKey(d.spec)) ?? -1 }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ d }) => d);
}

/**
 * A recorded server id in today's form. A state file of an agent before the one key text
 * recorded `address/port`: its holds keep their pre-drain order across the upgrade.
 */
function recordedKey(id: string): string {
  const old = /^([^/]+)\/(\d+)$/.exec(id);
  return old === null ? id.toLowerCase() : formatDestinationKey({ address: (old[1] as string).toLowerCase(), port: Number(old[2]) });
}

export function planFlowpin(input: FlowpinInput): FlowpinPlan {
  const { range } = input;
  const optOut = input.optOutPodUids ?? new Set<string>();
  const byId = new Map<string, ServiceSnapshot>();
  for (const snapshot of input.services) byId.set(formatServiceKey(snapshot.service.key), snapshot);
  const registered = new Map<string, RegistryEntry>();
  for (const entry of input.registry) if (inRange(range, entry.fwmark)) registered.set(formatServiceKey(entry.original), entry);
  const registeredMarks = new Set([...registered.values()].map((e) => e.fwmark));

  // Marks used by fwmark services that are not our twins (in or out of the range).
  const foreignMarks = new Set<number>();
  const foreign: number[] = [];
  for (const snapshot of input.services) {
    const mark = snapshot.service.key.fwmark;
    if (mark === undefined || registeredMarks.has(mark)) continue;
    foreignMarks.add(mark);
    if (inRange(range, mark)) foreign.push(mark);
  }

  // Held servers per original service (held servers inside twins are never input: the hold skips the range).
  const heldByService = new Map<string, HeldRef[]>();
  for (const held of input.held) {
    if (held.service.fwmark !== undefined && inRange(range, held.service.fwmark)) continue;
    const id = formatServiceKey(held.service);
    heldByService.set(id, [...(heldByService.get(id) ?? []), held]);
  }

  const skipped: FlowpinPlan['skipped'] = [];
  const wanted = new Map<string, { snapshot: ServiceSnapshot; held: HeldRef[] }>();
  for (const [id, helds] of [...heldByService].sort(([a], [b]) => a.localeCompare(b))) {
    const snapshot = byId.get(id);
    if (snapshot === undefined) {
      skipped.push({ id, reason: 'original-missing', detail: 'the service is not in IPVS any more' });
      continue;
    }
    const notEligible = eligibility(snapshot.service);
    if (notEligible !== undefined) {
      skipped.push({ id, ...notEligible });
      continue;
    }
    const pinned = helds.filter((h) => !optOut.has(h.podUid));
    if (pinned.length === 0) {
      skipped.push({ id, reason: 'opted-out', detail: `flow pinning turned off for ${[...new Set(helds.map((h) => h.podKey))].join(', ')}` });
      continue;
    }
    wanted.set(id, { snapshot, held: pinned });
  }

  const current = new Map([...registered].map(([id, entry]) => [id, entry.fwmark]));
  const { marks, exhausted } = allocateMarks(range, [...wanted.keys()], current, foreignMarks);
  const twins: TwinPlan[] = [];

  for (const [id, { snapshot, held }] of wanted) {
    const fwmark = marks.get(id);
    if (fwmark === undefined) continue;
    const heldWeight = new Map(held.map((h) => [formatDestinationKey(h.destination), h.originalWeight]));
    const destinations = preDrainOrder(held, [...snapshot.destinations.map((d): TwinDestination => {
      const original = heldWeight.get(formatDestinationKey(d));
      if (original !== undefined) return { spec: destinationSpecOf(d, original), weight: original };
      if (d.weight === 0) return { spec: destinationSpecOf(d, ASSUMED_LAST_WEIGHT), weight: 0 };
      return { spec: destinationSpecOf(d, d.weight), weight: d.weight };
    }), ...deletedHeld(held, snapshot.destinations)]);
    const existing = byId.get(formatServiceKey({ family: snapshot.service.key.family, fwmark }));
    twins.push({
      id, original: normalizeKey(snapshot.service.key), fwmark, state: 'active', spec: twinSpec(snapshot.service, fwmark), destinations,
      pods: [...new Set(held.map((h) => h.podKey))].sort(), connections: existing === undefined ? 0 : connectionsOf(existing.destinations),
    });
  }

  // Registered twins nothing needs any more: retire while they carry connections, else delete.
  for (const [id, entry] of [...registered].sort(([a], [b]) => a.localeCompare(b))) {
    if (wanted.has(id) && marks.get(id) === entry.fwmark) continue;
    const twin = byId.get(formatServiceKey({ family: entry.original.family, fwmark: entry.fwmark }));
    if (twin === undefined) continue; // already gone: the registry forgets it
    const originalDests = new Set((byId.get(id)?.destinations ?? []).map(formatDestinationKey));
    const kept = twin.destinations.filter((d) => originalDests.has(formatDestinationKey(d)));
    const connections = connectionsOf(kept);
    twins.push({
      id, original: normalizeKey(entry.original), fwmark: entry.fwmark, state: connections > 0 ? 'retiring' : 'delete', spec: twinSpec(twin.service, entry.fwmark),
      destinations: kept.map((d) => ({ spec: destinationSpecOf(d, d.weight), weight: d.weight })), pods: [], connections,
    });
  }
  twins.sort((a, b) => a.fwmark - b.fwmark);
  return { twins, skipped, exhausted, foreign: foreign.sort((a, b) => a - b) };
}
