/**
 * The shapes flow pinning reads and writes, declared structurally here because `src/` may not
 * import `native/` (they match netlink-native's IpvsService / IpvsDestination / specs field for
 * field, so the agent passes its values straight in and out).
 */

export type FlowpinFamily = 4 | 6;

export type FlowpinServiceKey =
  | { family: FlowpinFamily; protocol: 'tcp' | 'udp' | 'sctp'; address: string; port: number; fwmark?: undefined }
  | { family: FlowpinFamily; fwmark: number; protocol?: undefined; address?: undefined; port?: undefined };

/** An IPVS virtual service as listed from the kernel. */
export interface FlowpinService {
  key: FlowpinServiceKey;
  scheduler: string;
  /** Raw IP_VS_SVC_F_* flags (mh-fallback = sched-flag-1, mh-port = sched-flag-2, ...). */
  flags: number;
  timeout: number;
  netmask: number;
}

/** A real server as listed from the kernel, in the kernel's list order. */
export interface FlowpinDestination {
  address: string;
  port: number;
  family: FlowpinFamily;
  forwarding: 'masq' | 'local' | 'tunnel' | 'route' | 'bypass';
  weight: number;
  upperThreshold: number;
  lowerThreshold: number;
  tunnelType: 'ipip' | 'gue' | 'gre';
  tunnelPort: number;
  tunnelFlags: number;
  activeConnections: number;
  inactiveConnections: number;
}

/** What it takes to add a real server (netlink-native's IpvsDestinationSpec). */
export interface FlowpinDestinationSpec {
  address: string;
  port: number;
  family: FlowpinFamily;
  forwarding: FlowpinDestination['forwarding'];
  weight: number;
  upperThreshold: number;
  lowerThreshold: number;
  tunnelType: FlowpinDestination['tunnelType'];
  tunnelPort: number;
  tunnelFlags: number;
}

/** What it takes to add a virtual service (netlink-native's IpvsServiceSpec). */
export interface FlowpinServiceSpec {
  key: { family: FlowpinFamily; fwmark: number };
  scheduler: string;
  flags: number;
  timeout: number;
  netmask: number;
}

/** One service with its real servers, as the node's IPVS has them now. */
export interface ServiceSnapshot {
  service: FlowpinService;
  /** In the kernel's dump order (newest first: the kernel prepends on add). */
  destinations: FlowpinDestination[];
}

/** A held server's spec as the hold records it (netlink-native's IpvsDestinationSpec: optional fields). */
export type HeldSpec = Partial<Omit<FlowpinDestinationSpec, 'address' | 'port' | 'family'>> & { address: string; port: number; family?: FlowpinFamily };

/** A real server the IPVS hold keeps at weight 0 for a draining pod. */
export interface HeldRef {
  podUid: string;
  podKey: string;
  service: FlowpinServiceKey;
  destination: { address: string; port: number };
  /** The weight before the hold: the twin gives it back. */
  originalWeight: number;
  /** How to add the server (the twin adds it even while the proxy has deleted it from the original); unset fields take IPVS's defaults. */
  spec?: HeldSpec;
  /**
   * The original service's servers (`address/port`, lower case, dump order) before the drain:
   * the twin uses this order, since deleting and re-adding a server changes the kernel's
   * (and with it the mh/sh table).
   */
  serviceOrder?: readonly string[];
}
