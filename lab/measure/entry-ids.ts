import type { ConntrackApi } from 'netlink-native/types';

/**
 * The conntrack entries of a pod's flows, by the kernel's entry id: an entry that was deleted
 * and re-created (even if it DNATs to the same pod again) gets a new id, so comparing two
 * snapshots proves whether a live pod's flows were left alone.
 */
export async function entryIdsOf(conntrack: ConntrackApi, podIp: string): Promise<Set<number>> {
  const entries = await conntrack.listConntrack({ addresses: [podIp], match: ['replySrc'] });
  return new Set(entries.map((entry) => entry.id));
}

/** How many of `before` are still present in `after`. */
export function countKept(before: ReadonlySet<number>, after: ReadonlySet<number>): number {
  let kept = 0;
  for (const id of before) if (after.has(id)) kept += 1;
  return kept;
}
