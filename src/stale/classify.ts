import { IPS_DST_NAT } from 'netlink-native/types';
import type { ConntrackEntry, ConntrackEntryRef } from 'netlink-native/types';
import { normalizeAddress } from './address.js';
import { entryKey, entryRef, formatEndpoint } from './entry.js';
import type { Ownership } from './ownership.js';

/** Why an entry is or is not stale. */
export type EntryVerdict = 'not-nat' | 'owned' | 'pod-ip' | 'stale';

/** One stale entry, in the words an operator reads. */
export interface StaleEntry {
  key: string;
  protocol: string;
  family: 4 | 6;
  zone: number;
  state: string | undefined;
  /** Seconds left before the kernel expires it. */
  timeout: number;
  client: { address: string; port: number | undefined };
  /** The address the client sent to: the service's address:port (original destination). */
  service: { address: string; port: number | undefined };
  /** The DNAT target that no endpoint owns: the reply direction's source. */
  target: { address: string; port: number | undefined };
  /** What deletes exactly this entry. */
  ref: ConntrackEntryRef;
}

/** Stale entries of one service address:port (the original destination). */
export interface StaleGroup {
  service: { protocol: string; address: string; port: number | undefined };
  /** `namespace/name` when the target's last owner is known (the janitor remembers it). */
  serviceName: string | undefined;
  entries: StaleEntry[];
}

export interface Classification {
  scanned: number;
  counts: Record<EntryVerdict, number>;
  stale: StaleEntry[];
}

/**
 * Classifies a dump. An entry is stale when the kernel translated its destination
 * (`IPS_DST_NAT`) and its reply source (the DNAT target, address:port with protocol) is owned
 * by no endpoint and is not a live pod's IP (`podIps`: this node's pods, or any pod known alive).
 */
export function classifyEntries(
  entries: Iterable<ConntrackEntry>,
  ownership: Ownership,
  podIps: ReadonlySet<string>,
): Classification {
  const counts: Record<EntryVerdict, number> = { 'not-nat': 0, owned: 0, 'pod-ip': 0, stale: 0 };
  const stale: StaleEntry[] = [];
  let scanned = 0;
  for (const entry of entries) {
    scanned++;
    const verdict = classifyEntry(entry, ownership, podIps);
    counts[verdict]++;
    if (verdict !== 'stale') continue;
    const target = normalizeAddress(entry.reply.src);
    stale.push({
      key: entryKey(entry),
      protocol: entry.protocol,
      family: entry.family,
      zone: entry.zone,
      state: entry.state,
      timeout: entry.timeout,
      client: { address: entry.original.src, port: entry.original.srcPort },
      service: { address: entry.original.dst, port: entry.original.dstPort },
      target: { address: target, port: entry.reply.srcPort },
      ref: entryRef(entry),
    });
  }
  return { scanned, counts, stale };
}

export function classifyEntry(entry: ConntrackEntry, ownership: Ownership, podIps: ReadonlySet<string>): EntryVerdict {
  if ((entry.status & IPS_DST_NAT) === 0) return 'not-nat';
  if (ownership.owns(entry.protocol, entry.reply.src, entry.reply.srcPort)) return 'owned';
  if (podIps.has(normalizeAddress(entry.reply.src))) return 'pod-ip';
  return 'stale';
}

/** Groups stale entries by service (original destination address:port and protocol), largest group first. */
export function groupByService(stale: readonly StaleEntry[], ownership?: Ownership): StaleGroup[] {
  const groups = new Map<string, StaleGroup>();
  for (const entry of stale) {
    const id = `${entry.protocol}|${formatEndpoint(entry.service.address, entry.service.port)}`;
    let group = groups.get(id);
    if (group === undefined) {
      const serviceName = ownership?.serviceOf(entry.protocol, entry.target.address, entry.target.port);
      group = { service: { protocol: entry.protocol, ...entry.service }, serviceName, entries: [] };
      groups.set(id, group);
    }
    group.entries.push(entry);
  }
  const label = (g: StaleGroup): string => `${g.service.protocol} ${formatEndpoint(g.service.address, g.service.port)}`;
  return [...groups.values()].sort((a, b) => b.entries.length - a.entries.length || label(a).localeCompare(label(b)));
}

/** What a C-side pre-filter counted without handing the entries over (netlink-native `scanDnatEntries`). */
export interface PrefilterCounts {
  scanned: number;
  notNat: number;
  owned: number;
}

/**
 * Classifies the candidates of a pre-filtered dump (DNAT'ed, not owned by the targets the filter
 * was given) and adds the filter's counts: the same result as classifyEntries over the whole dump.
 */
export function classifyCandidates(candidates: Iterable<ConntrackEntry>, prefilter: PrefilterCounts, ownership: Ownership, podIps: ReadonlySet<string>): Classification {
  return combineCandidates([classifyEntries(candidates, ownership, podIps)], prefilter);
}

/**
 * The classification of a pre-filtered dump whose candidates were classified in parts (batches
 * handed over while the dump ran): the parts' counts and stale entries, plus the filter's counts.
 */
export function combineCandidates(parts: readonly Classification[], prefilter: PrefilterCounts): Classification {
  const counts: Record<EntryVerdict, number> = { 'not-nat': prefilter.notNat, owned: prefilter.owned, 'pod-ip': 0, stale: 0 };
  const stale: StaleEntry[] = [];
  for (const part of parts) {
    for (const verdict of Object.keys(counts) as EntryVerdict[]) counts[verdict] += part.counts[verdict];
    for (const entry of part.stale) stale.push(entry);
  }
  return { scanned: prefilter.scanned, counts, stale };
}

/** Moves stale entries whose target is one of `podIps` (canonical) to 'pod-ip': what classifyEntries would have said with them. */
export function excludePodIps(classification: Classification, podIps: ReadonlySet<string>): Classification {
  const stale = classification.stale.filter((e) => !podIps.has(e.target.address));
  const moved = classification.stale.length - stale.length;
  return { ...classification, stale, counts: { ...classification.counts, 'pod-ip': classification.counts['pod-ip'] + moved, stale: stale.length } };
}
