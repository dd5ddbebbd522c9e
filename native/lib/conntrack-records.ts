/**
 * Decodes the addon's entry records (one ArrayBuffer per result; layout in
 * native/src/napi/ct_records.h) into ConntrackEntry objects. Building an entry here costs about
 * what a single N-API property set cost when C built the objects, and object literals give
 * every entry the same shape.
 */
import { formatAddress, formatIpv4 } from './conntrack-address.js';
import { protocolName, stateName, statusFlagNames } from './conntrack-names.js';
import type { ConntrackEntry, ConntrackTuple, IpFamily } from './types.js';

/** CT_RECORD_SIZE and CT_RECORD_TUPLE_SIZE in ct_records.h. */
export const RECORD_SIZE = 104;
const TUPLE_SIZE = 40;
const ORIGINAL = 24;
const REPLY = ORIGINAL + TUPLE_SIZE;
const HAS_PORTS = 1;
const HAS_ICMP = 2;
const ZONE_ORIGINAL = 16;
const ZONE_REPLY = 32;

/** Address text per IPv4 address seen in this decode (a dump repeats few addresses many times). */
type V4Names = Map<number, string>;

function addressAt(bytes: Uint8Array, view: DataView, offset: number, family: number, v4: V4Names): string {
  if (family === 4) {
    const n = view.getUint32(offset, false);
    let text = v4.get(n);
    if (text === undefined) {
      text = formatIpv4(n);
      v4.set(n, text);
    }
    return text;
  }
  return formatAddress({ family: 6, bytes: Array.from(bytes.subarray(offset, offset + 16)) });
}

function tupleAt(bytes: Uint8Array, view: DataView, offset: number, family: number, flags: number, v4: V4Names): ConntrackTuple {
  const src = addressAt(bytes, view, offset, family, v4);
  const dst = addressAt(bytes, view, offset + 16, family, v4);
  if (flags & HAS_PORTS) return { src, dst, srcPort: view.getUint16(offset + 32, true), dstPort: view.getUint16(offset + 34, true) };
  if (flags & HAS_ICMP) return { src, dst, icmpId: view.getUint16(offset + 36, true), icmpType: bytes[offset + 38] ?? 0, icmpCode: bytes[offset + 39] ?? 0 };
  return { src, dst };
}

export function decodeEntryRecords(records: ArrayBuffer): ConntrackEntry[] {
  const bytes = new Uint8Array(records);
  const view = new DataView(records);
  const v4: V4Names = new Map();
  const count = Math.floor(records.byteLength / RECORD_SIZE);
  const out = new Array<ConntrackEntry>(count);
  for (let i = 0; i < count; i++) {
    const at = i * RECORD_SIZE;
    const family = bytes[at] ?? 0;
    const protocolNumber = bytes[at + 1] ?? 0;
    const flags = bytes[at + 5] ?? 0;
    const status = view.getUint32(at + 8, true);
    const zone = view.getUint16(at + 6, true);
    const entry: ConntrackEntry = {
      family: family as IpFamily,
      protocol: protocolName(protocolNumber),
      protocolNumber,
      original: tupleAt(bytes, view, at + ORIGINAL, family, flags, v4),
      reply: tupleAt(bytes, view, at + REPLY, family, flags >> 2, v4),
      timeout: view.getUint32(at + 12, true),
      mark: view.getUint32(at + 16, true),
      zone,
      origZone: flags & ZONE_ORIGINAL ? zone : 0,
      replyZone: flags & ZONE_REPLY ? zone : 0,
      status,
      statusFlags: statusFlagNames(status),
      id: view.getUint32(at + 20, true),
    };
    if (bytes[at + 2] === 1) entry.state = stateName(protocolNumber, bytes[at + 3] ?? 0);
    out[i] = entry;
  }
  return out;
}
