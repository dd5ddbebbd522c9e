/**
 * What the IPVS hold keeps: a held real server (the state file's record of it), the pods it
 * holds, and the ids of services and servers the hold, its index and its log name them by.
 */
import { destinationSpecOf, formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import type { IpvsDestination, IpvsDestinationKey, IpvsDestinationSpec, IpvsService, IpvsServiceKey } from 'netlink-native/types';
import { PINNABLE_SCHEDULERS } from '../../src/flowpin/twin-plan.js';

export interface HeldServer {
  podUid: string;
  podKey: string;
  service: IpvsServiceKey;
  scheduler: string;
  destination: IpvsDestinationKey;
  /** What it takes to re-add the server as it was (forwarding, thresholds, tunnel). */
  spec: IpvsDestinationSpec;
  /** The weight before the hold (the proxy's); 1 when first seen already at 0. */
  originalWeight: number;
  /**
   * The server was first seen already at 0 (another agent instance, or a crash, edited it
   * before this hold): `originalWeight` is the default, not a weight seen. A hold handed over
   * by the instance that saw the real weight replaces it (`adopt`). Absent: seen.
   */
  originalAssumed?: boolean;
  /** The agent re-added it after the proxy deleted it: the agent removes it on release. */
  recreated: boolean;
  /**
   * A pod of another node (an endpoint from its EndpointSlices): every node holds it, so its
   * hold and release are logged at debug here; its own node logs them at info.
   */
  elsewhere?: true;
  /**
   * The service's servers (`address/port`, dump order) as the last scan before this hold saw
   * them: the pre-drain list order, which flow pinning's twin copies. A proxy that deletes the
   * server and the hold that re-adds it change the kernel's order (re-added servers go to the
   * head); the mh/sh tables follow the order.
   */
  serviceOrder?: readonly string[];
}

export type RestoreAction = 'weight' | 'readd';

/** The level a hold's own lines are logged at (see `HeldServer.elsewhere`). */
export function holdLogLevel(held: Pick<HeldServer, 'elsewhere'>): 'info' | 'debug' {
  return held.elsewhere === true ? 'debug' : 'info';
}

/** Which pods no longer draining the API shows serving again (a release then restores their weights); a Set will do. */
export interface ServingUids {
  has(uid: string): boolean;
}

export interface DrainingPod {
  uid: string;
  key: string;
  ips: readonly string[];
  /**
   * false: the pod was never Ready (a new pod of a rollout, not Ready yet). The proxy only
   * programs Ready endpoints, so the address index not knowing its IPs is the normal case and
   * needs no scan at once (the interval's full pass holds any server it has).
   */
  wasReady?: boolean;
  /**
   * Only the real servers on these ports (and protocols: a fwmark service has none and matches
   * by port) are held: an endpoint from an EndpointSlice is held by its slice's address, port
   * and protocol, never by bare IP (a host-network endpoint's address is a node's). Absent:
   * every server with one of `ips`. Empty: none newly held, those held already stay (a hold
   * resumed from the state file before the slices are listed).
   */
  ports?: ReadonlyArray<{ port: number; protocol: string }>;
  /** A pod of another node (from EndpointSlices): its holds are logged at debug (`HeldServer.elsewhere`). */
  elsewhere?: boolean;
}

/** Whether `pod`'s hold covers the server `dest` of `service` (its ports, when it names them). */
export function covers(pod: DrainingPod, service: IpvsServiceKey, dest: IpvsDestinationKey): boolean {
  if (pod.ports === undefined) return true;
  return pod.ports.some((p) => p.port === dest.port && (service.fwmark !== undefined || p.protocol === service.protocol));
}

/** Weight kube-proxy gives every endpoint: used as the original of a server first seen at 0. */
export const DEFAULT_ORIGINAL_WEIGHT = 1;

export function heldId(service: IpvsServiceKey, dest: IpvsDestinationKey): string {
  return `${formatServiceKey(service)}>${formatDestinationKey(dest)}`;
}

/**
 * Whether a hold records its service's server order: only flow pinning's twin reads it, and
 * only a scheduler with a consistent-hash table has a twin; in any other service (`rr`,
 * kube-proxy's default) the order is as long as the service and serves nothing.
 */
export function recordsOrder(service: Pick<IpvsService, 'scheduler'>): boolean {
  return PINNABLE_SCHEDULERS.includes(service.scheduler);
}

/**
 * A new hold of `dest` (of `service`) for `pod`, as seen now; `serviceOrder`: the service's
 * servers as the last full scan saw them, recorded where the scheduler has a twin (recordsOrder).
 */
export function newHold(pod: DrainingPod, service: IpvsService, dest: IpvsDestination, serviceOrder: readonly string[] | undefined): HeldServer {
  return {
    podUid: pod.uid, podKey: pod.key, service: service.key, scheduler: service.scheduler, destination: { address: dest.address, port: dest.port, family: dest.family },
    spec: destinationSpecOf(dest), originalWeight: dest.weight > 0 ? dest.weight : DEFAULT_ORIGINAL_WEIGHT, recreated: false,
    ...(dest.weight > 0 ? {} : { originalAssumed: true }),
    ...(pod.elsewhere === true ? { elsewhere: true as const } : {}),
    ...(serviceOrder !== undefined && recordsOrder(service) ? { serviceOrder } : {}),
  };
}
