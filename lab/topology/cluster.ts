import type { LinkSpec, NamespaceSpec, RouteSpec, Topology } from './types.js';

/**
 * A small cluster as a topology, kept as data:
 * - `client`: the client host and the upstream router (it owns the client address
 *   10.70.0.10 on lo, and routes to every node; a service VIP is an ECMP route over nodes,
 *   as BGP would announce it);
 * - `node-<i>`: one namespace per node, its own conntrack (and IPVS in the VM), forwarding on;
 * - `pod-<i>-<k>`: Calico-style pods (a /32 on eth0 behind a veth with proxy ARP, a default
 *   route to 169.254.1.1 onlink, a blackhole route for the node's pod block);
 * - `control`: where the list/watch API stand-in listens, linked to every node.
 */

export interface ClusterPlan {
  nodes: number;
  /** Pods per node index (1-based): `{ 1: 2 }` puts two pods on node-1. */
  podsPerNode: Record<number, number>;
  /** Service addresses the client routes to nodes (ClusterIP for ghost, VIP for DSR). */
  serviceCidrs: string[];
  /** Nodes that carry the service route at first (1-based); all nodes when absent. */
  serviceNextHops?: number[];
  /** A control namespace linked to every node (for the API stand-in). */
  control?: boolean;
  /** Extra sysctls for node namespaces (conntrack timeouts, IPVS knobs). */
  nodeSysctls?: Record<string, string>;
  /** Extra sysctls for the client/router namespace. */
  clientSysctls?: Record<string, string>;
}

export const CLIENT_ADDRESS = '10.70.0.10';

export function nodeName(i: number): string {
  return `node-${i}`;
}

export function podName(node: number, k: number): string {
  return `pod-${node}-${k}`;
}

export function podAddress(node: number, k: number): string {
  return `10.244.${node}.${10 + k}`;
}

/** The node's address on its link to the client/router. */
export function nodeUplinkAddress(node: number): string {
  return `10.77.${node}.1`;
}

export function routerAddressFor(node: number): string {
  return `10.77.${node}.2`;
}

/** The node's address on its link to the control namespace (agents reach the API here). */
export function nodeControlAddress(node: number): string {
  return `10.78.${node}.1`;
}

export function controlAddressFor(node: number): string {
  return `10.78.${node}.2`;
}

export function buildClusterTopology(plan: ClusterPlan): Topology {
  const namespaces: NamespaceSpec[] = [
    { name: 'client', role: 'client', sysctls: { 'net.ipv4.ip_forward': '1', ...plan.clientSysctls }, loopbackAddresses: [`${CLIENT_ADDRESS}/32`] },
  ];
  const links: LinkSpec[] = [];
  const routes: RouteSpec[] = [];
  if (plan.control === true) namespaces.push({ name: 'control', role: 'control' });
  for (let i = 1; i <= plan.nodes; i++) {
    const node = nodeName(i);
    namespaces.push({ name: node, role: 'node', sysctls: { 'net.ipv4.ip_forward': '1', ...plan.nodeSysctls } });
    links.push({ a: { ns: 'client', ifname: `n${i}`, addresses: [`${routerAddressFor(i)}/24`] }, b: { ns: node, ifname: 'up0', addresses: [`${nodeUplinkAddress(i)}/24`] } });
    routes.push({ ns: node, to: `${CLIENT_ADDRESS}/32`, via: [routerAddressFor(i)] });
    // a default route (nodes have one; proxy ARP for the pods' 169.254.1.1 gateway needs it)
    routes.push({ ns: node, to: 'default', via: [routerAddressFor(i)] });
    routes.push({ ns: node, to: `10.244.${i}.0/24`, type: 'blackhole' });
    for (let j = 1; j <= plan.nodes; j++) {
      if (j !== i) routes.push({ ns: node, to: `10.244.${j}.0/24`, via: [routerAddressFor(i)] });
    }
    routes.push({ ns: 'client', to: `10.244.${i}.0/24`, via: [nodeUplinkAddress(i)] });
    if (plan.control === true) {
      links.push({ a: { ns: 'control', ifname: `n${i}`, addresses: [`${controlAddressFor(i)}/24`] }, b: { ns: node, ifname: 'ctl0', addresses: [`${nodeControlAddress(i)}/24`] } });
    }
    const pods = plan.podsPerNode[i] ?? 0;
    for (let k = 1; k <= pods; k++) {
      const pod = podName(i, k);
      namespaces.push({ name: pod, role: 'pod' });
      links.push({ a: { ns: node, ifname: `p${k}`, addresses: [], proxyArp: true }, b: { ns: pod, ifname: 'eth0', addresses: [`${podAddress(i, k)}/32`] } });
      routes.push({ ns: node, to: `${podAddress(i, k)}/32`, dev: `p${k}` });
      routes.push({ ns: pod, to: '169.254.1.1/32', dev: 'eth0' });
      routes.push({ ns: pod, to: 'default', via: ['169.254.1.1'], dev: 'eth0', onlink: true });
    }
  }
  const hops = plan.serviceNextHops ?? Array.from({ length: plan.nodes }, (_, n) => n + 1);
  for (const cidr of plan.serviceCidrs) routes.push({ ns: 'client', to: cidr, via: hops.map(nodeUplinkAddress), src: CLIENT_ADDRESS });
  return { namespaces, links, routes };
}

