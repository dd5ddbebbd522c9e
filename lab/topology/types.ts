/**
 * A lab topology as data: namespaces (a client, nodes, pods, a control namespace for the API
 * stand-in), veth links between them, and routes. `applyTopology` builds it with `ip`;
 * names here are logical (`node-1`), the real netns names carry a per-run prefix.
 */

export type NamespaceRole = 'client' | 'node' | 'pod' | 'control';

export interface NamespaceSpec {
  /** Logical name, unique in the topology (`client`, `node-1`, `pod-2`). */
  name: string;
  role: NamespaceRole;
  /** sysctls set once the namespace exists (`net.ipv4.ip_forward`: `1`). */
  sysctls?: Record<string, string>;
  /** Addresses on `lo` (the host kernel has no `dummy` links). */
  loopbackAddresses?: string[];
}

export interface LinkEnd {
  ns: string;
  /** Interface name inside that namespace (at most 15 characters). */
  ifname: string;
  /** CIDR addresses (`10.77.0.1/24`, or `/32` for a Calico-style pod address). */
  addresses: string[];
  /** Proxy ARP on this end (the node side of a Calico-style pod veth). */
  proxyArp?: boolean;
}

/** A veth pair between two namespaces. */
export interface LinkSpec {
  a: LinkEnd;
  b: LinkEnd;
}

export interface RouteSpec {
  ns: string;
  /** Destination prefix (`10.96.0.0/16`, `default`). */
  to: string;
  /** Next hops; more than one makes an ECMP route (what BGP would install). */
  via?: string[];
  /** Output device (for `scope link` routes to a pod veth, and for `onlink` next hops). */
  dev?: string;
  onlink?: boolean;
  /** Preferred source address for traffic the namespace itself sends on this route. */
  src?: string;
  /** `blackhole`: what Calico installs for a node's pod block; packets to dead pod IPs vanish. */
  type?: 'unicast' | 'blackhole';
}

export interface Topology {
  namespaces: NamespaceSpec[];
  links: LinkSpec[];
  routes: RouteSpec[];
}
