import { normalizeAddress } from './address.js';

/** The parts of a Pod that decide whether it holds its IPs. */
export interface PodLike {
  metadata?: { name?: string; namespace?: string; deletionTimestamp?: unknown } | null;
  spec?: { nodeName?: string | null; hostNetwork?: boolean | null } | null;
  status?: { phase?: string | null; podIP?: string | null; podIPs?: Array<{ ip?: string | null }> | null } | null;
}

/** A pod holds its IPs until it has finished (Succeeded/Failed); a terminating pod still holds them. */
export function podHoldsIps(pod: PodLike): boolean {
  const phase = pod.status?.phase ?? '';
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.spec?.hostNetwork !== true;
}

/** Addresses held by live pods (optionally only those on `nodeName`), canonical form. */
export function livePodIps(pods: Iterable<PodLike>, nodeName?: string): Set<string> {
  const ips = new Set<string>();
  for (const pod of pods) {
    if (!podHoldsIps(pod)) continue;
    if (nodeName !== undefined && pod.spec?.nodeName !== nodeName) continue;
    for (const ip of podIpsOf(pod)) ips.add(ip);
  }
  return ips;
}

export function podIpsOf(pod: PodLike): string[] {
  const out = new Set<string>();
  if (pod.status?.podIP) out.add(normalizeAddress(pod.status.podIP));
  for (const entry of pod.status?.podIPs ?? []) if (entry.ip) out.add(normalizeAddress(entry.ip));
  return [...out];
}
