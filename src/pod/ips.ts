import type { PodLike } from './pod-like.js';

/** Lower-cases IPv6 and trims, so the same address compares equal wherever it came from. */
export function normalizeIp(ip: string): string {
  return ip.trim().toLowerCase();
}

/**
 * The pod's own IPs (`status.podIPs`, falling back to `status.podIP`), deduplicated.
 * A host-network pod has the node's addresses: it owns no IP of its own, so it has none here
 * (holding or flushing a node address would touch every pod's traffic).
 */
export function podIps(pod: PodLike): string[] {
  if (pod.spec?.hostNetwork === true) return [];
  const out = new Set<string>();
  for (const entry of pod.status?.podIPs ?? []) {
    if (typeof entry.ip === 'string' && entry.ip.trim() !== '') out.add(normalizeIp(entry.ip));
  }
  const single = pod.status?.podIP;
  if (typeof single === 'string' && single.trim() !== '') out.add(normalizeIp(single));
  return [...out];
}
