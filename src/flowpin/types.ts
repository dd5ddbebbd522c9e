/**
 * What flow pinning plans over: netlink-native's IPVS types (src/ takes them with `import type`,
 * so the agent passes its values straight in and out), and the records of the IPVS hold.
 */
import type { IpvsDestination, IpvsDestinationSpec, IpvsService, IpvsServiceKey } from 'netlink-native/types';

/** One service with its real servers, as the node's IPVS has them now. */
export interface ServiceSnapshot {
  service: IpvsService;
  /** In the kernel's dump order (newest first: the kernel prepends on add). */
  destinations: IpvsDestination[];
}

/** A real server the IPVS hold keeps at weight 0 for a draining pod. */
export interface HeldRef {
  podUid: string;
  podKey: string;
  service: IpvsServiceKey;
  destination: { address: string; port: number };
  /** The weight before the hold: the twin gives it back. */
  originalWeight: number;
  /** How to add the server (the twin adds it even while the proxy has deleted it from the original); unset fields take IPVS's defaults. */
  spec?: IpvsDestinationSpec;
  /**
   * The original service's servers (`address/port`, lower case, dump order) before the drain:
   * the twin uses this order, since deleting and re-adding a server changes the kernel's
   * (and with it the mh/sh table).
   */
  serviceOrder?: readonly string[];
}
