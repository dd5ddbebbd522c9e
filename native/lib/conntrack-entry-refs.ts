/**
 * Checks for deleteConntrackEntries, shared by the addon wrapper and the in-memory stand-in so
 * both reject the same input (NetlinkError EINVAL) before anything is deleted, and the
 * by-protocol naming of its result. An entry must name a complete original tuple: a delete
 * without one would make ctnetlink flush the whole table, so nothing incomplete gets through.
 */
import { constants } from 'node:os';
import { canonicalAddress, parseAddress } from './conntrack-address.js';
import { protocolName } from './conntrack-names.js';
import { NetlinkError, type ConntrackEntryRef, type ConntrackTuple, type DeleteCountsByProtocol } from './types.js';

/** Protocols whose tuple carries ports (ctnetlink needs both to look the entry up). */
const PORTED = new Set([6, 17, 33, 132, 136]);
const ICMP = 1;
const ICMPV6 = 58;

export interface CheckedEntryRef {
  family: 4 | 6;
  protocolNumber: number;
  original: ConntrackTuple;
  /** Sent as CTA_ZONE: the original direction's zone id. */
  zone: number;
  /** A second zone the ENOENT re-check GETs (the ref did not say its zone's direction). */
  recheckZone?: number;
  id?: number;
}

function invalid(op: string, message: string): NetlinkError {
  return new NetlinkError(op, constants.errno.EINVAL, 'EINVAL', message);
}

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function checkOne(op: string, e: unknown, i: number): CheckedEntryRef {
  const at = `entries[${i}]`;
  if (typeof e !== 'object' || e === null) throw invalid(op, `${at} must be an object`);
  const ref = e as Partial<ConntrackEntryRef>;
  if (ref.family !== 4 && ref.family !== 6) throw invalid(op, `${at}.family must be 4 or 6`);
  if (!isInt(ref.protocolNumber, 0, 255)) throw invalid(op, `${at}.protocolNumber must be an integer in 0..255`);
  const o = ref.original;
  if (typeof o !== 'object' || o === null) throw invalid(op, `${at}.original is required (the entry's original tuple)`);
  const out: ConntrackTuple = { src: '', dst: '' };
  for (const field of ['src', 'dst'] as const) {
    const text = typeof o[field] === 'string' ? o[field] : undefined;
    const parsed = text === undefined ? undefined : parseAddress(text);
    if (text === undefined || parsed === undefined || parsed.family !== ref.family) throw invalid(op, `${at}.original.${field} must be an IPv${ref.family} address`);
    out[field] = canonicalAddress(text) ?? text;
  }
  const p = ref.protocolNumber;
  if (o.srcPort !== undefined || o.dstPort !== undefined || PORTED.has(p)) {
    if (!isInt(o.srcPort, 0, 65535) || !isInt(o.dstPort, 0, 65535)) throw invalid(op, `${at}.original needs srcPort and dstPort (0..65535) for protocol ${protocolName(p)}`);
    out.srcPort = o.srcPort;
    out.dstPort = o.dstPort;
  }
  if (p === ICMP || p === ICMPV6) {
    if ((p === ICMP) !== (ref.family === 4)) throw invalid(op, `${at}: ${protocolName(p)} does not exist in IPv${ref.family}`);
    if (!isInt(o.icmpType, 0, 255) || !isInt(o.icmpCode, 0, 255) || !isInt(o.icmpId, 0, 65535)) throw invalid(op, `${at}.original needs icmpType, icmpCode and icmpId`);
    Object.assign(out, { icmpType: o.icmpType, icmpCode: o.icmpCode, icmpId: o.icmpId });
  }
  for (const field of ['zone', 'origZone', 'replyZone'] as const) {
    if (ref[field] !== undefined && !isInt(ref[field], 0, 65535)) throw invalid(op, `${at}.${field} must be an integer in 0..65535`);
  }
  if (ref.id !== undefined && !isInt(ref.id, 0, 0xffffffff)) throw invalid(op, `${at}.id must be an integer in 0..2^32-1`);
  const zone = ref.origZone ?? ref.zone ?? 0;
  // Without origZone a non-zero `zone` may have been a reply-only zone (looked up in zone 0).
  const recheckZone = ref.origZone === undefined && zone !== 0 ? 0 : undefined;
  return { family: ref.family, protocolNumber: p, original: out, zone, ...(recheckZone === undefined ? {} : { recheckZone }), ...(ref.id === undefined ? {} : { id: ref.id }) };
}

export function checkEntryRefs(op: string, entries: unknown): CheckedEntryRef[] {
  if (!Array.isArray(entries)) throw invalid(op, 'entries must be an array of conntrack entries');
  return (entries as unknown[]).map((e, i) => checkOne(op, e, i));
}

/** Adds one answer to the by-protocol counts. */
export function countByProtocol(by: Record<string, DeleteCountsByProtocol>, protocolNumber: number, outcome: keyof DeleteCountsByProtocol): void {
  const key = protocolName(protocolNumber);
  const row = by[key] ?? (by[key] = { deleted: 0, alreadyGone: 0, failed: 0 });
  row[outcome]++;
}
