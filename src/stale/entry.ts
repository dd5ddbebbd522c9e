/**
 * The parts of a conntrack entry that stale classification reads. Structural: netlink-native's
 * `ConntrackEntry` fits (src/ may not import native/).
 */
export interface ConntrackTupleView {
  src: string;
  dst: string;
  srcPort?: number;
  dstPort?: number;
}

export interface ConntrackEntryView {
  family: 4 | 6;
  protocol: string;
  original: ConntrackTupleView;
  reply: ConntrackTupleView;
  state?: string;
  /** Seconds until the entry expires. */
  timeout: number;
  zone: number;
  /** Raw `IPS_*` status bits. */
  status: number;
}

/** `IPS_DST_NAT` (include/uapi/linux/netfilter/nf_conntrack_common.h): the entry's destination was translated. */
export const IPS_DST_NAT = 1 << 5;

/**
 * An entry's identity: zone, protocol and original tuple. The kernel keys entries by tuple,
 * and the original tuple with the zone identifies one entry in a namespace.
 */
export function entryKey(entry: ConntrackEntryView): string {
  const o = entry.original;
  return `${entry.zone}|${entry.protocol}|${o.src}|${o.srcPort ?? ''}|${o.dst}|${o.dstPort ?? ''}`;
}

/** `address:port` with IPv6 in brackets; the address alone when there is no port. */
export function formatEndpoint(address: string, port: number | undefined): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}
