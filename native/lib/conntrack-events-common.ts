/**
 * What the event index's addon wrapper and its in-memory stand-in share: argument checks
 * (same NetlinkError for the same bad input) and the "does this entry concern these
 * addresses" rule (original destination or reply source).
 */
import { constants } from 'node:os';
import { canonicalAddress } from './conntrack-address.js';
import { NetlinkError, type ConntrackEntry, type ConntrackEventsOptions } from './types.js';

/** Canonical spellings, duplicates removed; EINVAL for anything that is not an IP address. */
export function checkAddresses(op: string, addresses: unknown): string[] {
  if (!Array.isArray(addresses)) throw new NetlinkError(op, constants.errno.EINVAL, 'EINVAL', 'addresses must be an array of IP addresses');
  const out = new Set<string>();
  for (const a of addresses as unknown[]) {
    const canonical = typeof a === 'string' ? canonicalAddress(a) : undefined;
    if (canonical === undefined) throw new NetlinkError(op, constants.errno.EINVAL, 'EINVAL', `addresses: ${JSON.stringify(a)} is not an IPv4 or IPv6 address`);
    out.add(canonical);
  }
  return [...out];
}

export const DEFAULT_EVENTS_RCVBUF = 8 << 20;
export const DEFAULT_MAX_FLOWS = 1 << 20;

export interface CheckedEventsOptions {
  recvBufferBytes: number;
  maxFlows: number;
  autoResync: boolean;
}

export function checkEventsOptions(options: ConntrackEventsOptions | undefined): CheckedEventsOptions {
  const o = options ?? {};
  const int = (name: string, v: unknown, min: number, max: number, def: number): number => {
    if (v === undefined) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new NetlinkError('openConntrackEvents', constants.errno.EINVAL, 'EINVAL', `${name} must be an integer in ${min}..${max}`);
    }
    return v;
  };
  if (o.autoResync !== undefined && typeof o.autoResync !== 'boolean') {
    throw new NetlinkError('openConntrackEvents', constants.errno.EINVAL, 'EINVAL', 'autoResync must be a boolean');
  }
  return {
    recvBufferBytes: int('recvBufferBytes', o.recvBufferBytes, 1, 1 << 30, DEFAULT_EVENTS_RCVBUF),
    maxFlows: int('maxFlows', o.maxFlows, 1, 1 << 26, DEFAULT_MAX_FLOWS),
    autoResync: o.autoResync ?? true,
  };
}

/** The index's rule: an entry concerns an address when it is its original destination or reply source. */
export function concerns(entry: Pick<ConntrackEntry, 'original' | 'reply'>, set: ReadonlySet<string>): boolean {
  return set.has(entry.original.dst) || set.has(entry.reply.src);
}
