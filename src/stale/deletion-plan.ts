import { isBusy, type Classification, type StaleEntry } from './classify.js';
import type { OwnershipIndex } from './ownership.js';

/**
 * Design note: how stale entries are deleted with the netlink-native API of today.
 *
 * The kernel identifies an entry by its tuple; netlink-native's `deleteConntrack` deletes by
 * address set (`match` fields) and protocol only, in one dump pass. Deleting "by the stale
 * entries' reply-source addresses" is exact only when *every* entry of that protocol whose
 * reply source is that address is itself a stale entry that may be deleted now. So an
 * address is deleted only when, in the same dump:
 *   - no endpoint (any port, any protocol) has that address (a sibling port may be owned),
 *   - no other entry of the protocol has it as reply source (an owned DNAT, a live pod's
 *     flow, or direct traffic to it),
 *   - every stale entry to it has passed its grace.
 * Anything else is reported as not deletable (or waiting) and left alone. What can still
 * slip in is an entry created between the dump and the delete (a new packet to an address no
 * endpoint and no live pod owns). A delete-by-tuple op in netlink-native would remove that
 * gap; until then this is the narrowest filter available.
 */
export interface AddressDelete {
  /** Conntrack protocol name (`tcp`, `udp`, `sctp`, ...). */
  protocol: string;
  /** Reply-source addresses to delete (`match: ['replySrc']`). */
  addresses: string[];
}

export type BlockReason = 'address-has-endpoint' | 'address-has-live-entries' | 'waiting-grace' | 'protocol-unfilterable';

export interface DeletionPlan {
  deletes: AddressDelete[];
  /** Entries the deletes cover. */
  covered: StaleEntry[];
  blocked: Array<{ entry: StaleEntry; reason: BlockReason }>;
}

const FILTERABLE = new Set(['tcp', 'udp', 'sctp', 'udplite', 'dccp', 'icmp', 'icmpv6', 'gre', 'ipip', 'ipv6']);

/**
 * Plans address-wide deletes that remove exactly the given stale entries.
 * `deletable`: keys allowed now (all of them for the CLI; past the grace for the janitor).
 */
export function planDeletion(classification: Classification, ownership: OwnershipIndex, deletable: ReadonlySet<string>): DeletionPlan {
  const byTarget = new Map<string, StaleEntry[]>();
  for (const entry of classification.stale) {
    const id = `${entry.protocol}|${entry.target.address}`;
    const list = byTarget.get(id);
    if (list === undefined) byTarget.set(id, [entry]);
    else list.push(entry);
  }
  const addressesByProtocol = new Map<string, string[]>();
  const covered: StaleEntry[] = [];
  const blocked: DeletionPlan['blocked'] = [];
  for (const entries of byTarget.values()) {
    const first = entries[0];
    if (first === undefined) continue;
    const reason = blockReason(first, entries, classification, ownership, deletable);
    if (reason !== undefined) {
      for (const entry of entries) blocked.push({ entry, reason });
      continue;
    }
    const list = addressesByProtocol.get(first.protocol) ?? [];
    list.push(first.target.address);
    addressesByProtocol.set(first.protocol, list);
    covered.push(...entries);
  }
  const deletes = [...addressesByProtocol].map(([protocol, addresses]) => ({ protocol, addresses: addresses.sort() }));
  return { deletes, covered, blocked };
}

function blockReason(
  first: StaleEntry,
  entries: StaleEntry[],
  classification: Classification,
  ownership: OwnershipIndex,
  deletable: ReadonlySet<string>,
): BlockReason | undefined {
  if (!FILTERABLE.has(first.protocol)) return 'protocol-unfilterable';
  if (ownership.ownsAddress(first.target.address)) return 'address-has-endpoint';
  if (isBusy(classification, first.protocol, first.target.address)) return 'address-has-live-entries';
  if (entries.some((e) => !deletable.has(e.key))) return 'waiting-grace';
  return undefined;
}
