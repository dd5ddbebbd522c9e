import type { StaleEntry } from './classify.js';

/**
 * Which stale entries to delete now. netlink-native deletes entries by their exact original
 * tuple, zone and kernel id (`deleteConntrackEntries`), so a delete touches that one entry and
 * nothing else: not a sibling flow to the same address, not an owned port of that address,
 * not a newer entry that reuses the tuple (its id differs: the kernel answers ENOENT). The only
 * reason left to hold a stale entry back is the grace (janitor): `deletable` holds the keys
 * allowed now (every stale key for the CLI).
 */
export type BlockReason = 'waiting-grace';

export interface DeletionPlan {
  /** Entries to delete now (their `ref`s go to deleteConntrackEntries). */
  covered: StaleEntry[];
  blocked: Array<{ entry: StaleEntry; reason: BlockReason }>;
}

export function planDeletion(stale: readonly StaleEntry[], deletable: ReadonlySet<string>): DeletionPlan {
  const covered: StaleEntry[] = [];
  const blocked: DeletionPlan['blocked'] = [];
  for (const entry of stale) {
    if (deletable.has(entry.key)) covered.push(entry);
    else blocked.push({ entry, reason: 'waiting-grace' });
  }
  return { covered, blocked };
}
