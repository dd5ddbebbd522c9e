import { buildClusterTopology, podAddress, podName } from '../topology/cluster.js';
import type { ServiceState } from '../proxy/service.js';
import type { ClientConfig } from '../traffic/client-config.js';
import { CLIENT_ADDRESS } from '../topology/cluster.js';
import type { Topology } from '../topology/types.js';

/** The ghost scenario's fixed parts: one node, two pods behind a ClusterIP, one client. */
export const GHOST_CLUSTER_IP = '10.96.0.10';
export const GHOST_NAMESPACE = 'shop';
export const SURVIVOR = { name: podName(1, 1), ip: podAddress(1, 1) };
export const VICTIM = { name: podName(1, 2), ip: podAddress(1, 2) };

export interface GhostTiming {
  /** Steady traffic before anything happens. */
  warmupMs: number;
  /** The pod is unready (and terminating) this long before it is deleted; it still answers. */
  drainMs: number;
  /** How long the client keeps measuring after the deletion. */
  windowMs: number;
}

export const DEFAULT_GHOST_TIMING: GhostTiming = { warmupMs: 1500, drainMs: 1000, windowMs: 6000 };

export function ghostTopology(): Topology {
  return buildClusterTopology({ nodes: 1, podsPerNode: { 1: 2 }, serviceCidrs: ['10.96.0.0/16'], control: true });
}

export function ghostService(endpoints: readonly { name: string; ip: string }[]): ServiceState {
  return {
    name: 'shop',
    address: GHOST_CLUSTER_IP,
    ports: [
      { name: 'dns', protocol: 'udp', port: 53, targetPort: 53 },
      { name: 'http', protocol: 'tcp', port: 80, targetPort: 80 },
    ],
    endpoints: endpoints.map((endpoint) => ({ pod: endpoint.name, ip: endpoint.ip })),
  };
}

export const GHOST_CLIENT: ClientConfig = {
  bind: CLIENT_ADDRESS,
  target: GHOST_CLUSTER_IP,
  pods: [SURVIVOR.name, VICTIM.name],
  udp: { port: 53, flowsPerPod: 4, intervalMs: 50, timeoutMs: 250 },
  tcp: { port: 80, flowsPerPod: 2, intervalMs: 50, timeoutMs: 3000, payloadBytes: 512 },
};
