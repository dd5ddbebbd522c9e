/**
 * The parts of a conntrack entry that stale classification reads. Structural: netlink-native's
 * `ConntrackEntry` fits (src/ may not import native/).
 */
export interface ConntrackTupleView {
  src: string;
  dst: string;
  srcPort?: number;
  dstPort?: number;
  icmpId?: number;
  icmpType?: number;
  icmpCode?: number;
}

export interface ConntrackEntryView {
  family: 4 | 6;
  protocol: string;
  /** IP protocol number (what an exact delete sends). */
  protocolNumber: number;
  original: ConntrackTupleView;
  reply: ConntrackTupleView;
  state?: string;
  /** Seconds until the entry expires. */
  timeout: number;
  zone: number;
  /** The zone id per direction (netlink-native sets both; a `--reply-zone` entry has origZone 0). */
  origZone?: number;
  replyZone?: number;
  /** Raw `IPS_*` status bits. */
  status: number;
  /** The kernel's entry id, when the dump gave one. */
  id?: number;
}

/**
 * What deletes exactly one entry (netlink-native's `deleteConntrackEntries` takes it): the
 * original tuple, protocol, family, zone and the kernel's id, so a newer flow that reuses the
 * tuple is never deleted in its place.
 */
export interface EntryRef {
  family: 4 | 6;
  protocolNumber: number;
  original: ConntrackTupleView;
  zone: number;
  /** The original direction's zone id: what the kernel's lookup by the original tuple matches. */
  origZone?: number;
  replyZone?: number;
  id?: number;
}

export function entryRef(entry: ConntrackEntryView): EntryRef {
  return {
    family: entry.family,
    protocolNumber: entry.protocolNumber,
    original: entry.original,
    zone: entry.zone,
    ...(entry.origZone === undefined ? {} : { origZone: entry.origZone }),
    ...(entry.replyZone === undefined ? {} : { replyZone: entry.replyZone }),
    ...(entry.id === undefined ? {} : { id: entry.id }),
  };
}

/** `IPS_DST_NAT` (include/uapi/linux/netfilter/nf_conntrack_common.h): the entry's destination was translated. */
export const IPS_DST_NAT = 1 << 5;

/**
 * An entry's identity: zone, protocol and original tuple. The kernel keys entries by tuple,
 * and the original tuple with the original direction's zone id identifies one entry in a
 * namespace.
 */
export function entryKey(entry: ConntrackEntryView): string {
  const o = entry.original;
  return `${entry.origZone ?? entry.zone}|${entry.protocol}|${o.src}|${o.srcPort ?? ''}|${o.dst}|${o.dstPort ?? ''}`;
}

/** `address:port` with IPv6 in brackets; the address alone when there is no port. */
export function formatEndpoint(address: string, port: number | undefined): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}
