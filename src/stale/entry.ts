import type { ConntrackEntry, ConntrackEntryRef } from 'netlink-native/types';

/**
 * What deletes exactly this entry (netlink-native's `deleteConntrackEntries` takes it): the
 * original tuple, protocol, family, zone and the kernel's id, so a newer flow that reuses the
 * tuple is never deleted in its place.
 */
export function entryRef(entry: ConntrackEntry): ConntrackEntryRef {
  return {
    family: entry.family,
    protocolNumber: entry.protocolNumber,
    original: entry.original,
    zone: entry.zone,
    ...(entry.origZone === undefined ? {} : { origZone: entry.origZone }),
    ...(entry.replyZone === undefined ? {} : { replyZone: entry.replyZone }),
    id: entry.id,
  };
}

/**
 * An entry's identity: zone, protocol and original tuple. The kernel keys entries by tuple,
 * and the original tuple with the original direction's zone id identifies one entry in a
 * namespace.
 */
export function entryKey(entry: ConntrackEntry): string {
  const o = entry.original;
  return `${entry.origZone ?? entry.zone}|${entry.protocol}|${o.src}|${o.srcPort ?? ''}|${o.dst}|${o.dstPort ?? ''}`;
}

/** `address:port` with IPv6 in brackets; the address alone when there is no port. */
export function formatEndpoint(address: string, port: number | undefined): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${port}`;
}
