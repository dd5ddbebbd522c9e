/**
 * Argument checks shared by the addon wrapper and the in-memory stand-in, so both reject the
 * same input with the same NetlinkError (code EINVAL) before anything touches a table.
 */
import { constants } from 'node:os';
import { canonicalAddress } from './conntrack-address.js';
import { isConntrackProtocol } from './conntrack-names.js';
import { NetlinkError, type ConntrackMatch, type ConntrackProtocol, type DeleteConntrackOptions, type ListConntrackOptions } from './types.js';

export const MATCH_MODES: readonly ConntrackMatch[] = ['origSrc', 'origDst', 'replySrc', 'replyDst'];

export interface CheckedFilter {
  /** Canonical spellings, duplicates removed; undefined = every address (list only). */
  addresses?: string[];
  match: ConntrackMatch[];
  protocols?: ConntrackProtocol[];
  zone?: number;
}

export interface CheckedDelete extends CheckedFilter {
  addresses: string[];
  dryRun: boolean;
}

export interface CheckedList extends CheckedFilter {
  limit?: number;
}

function invalid(op: string, message: string): NetlinkError {
  return new NetlinkError(op, constants.errno.EINVAL, 'EINVAL', message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkFilter(op: string, o: Record<string, unknown>, requireAddresses: boolean): CheckedFilter {
  const out: CheckedFilter = { match: [] };
  if (o.addresses !== undefined || requireAddresses) {
    if (!Array.isArray(o.addresses)) throw invalid(op, 'addresses must be an array of IP addresses');
    const seen = new Set<string>();
    for (const a of o.addresses as unknown[]) {
      const canonical = typeof a === 'string' ? canonicalAddress(a) : undefined;
      if (canonical === undefined) throw invalid(op, `addresses: ${JSON.stringify(a)} is not an IPv4 or IPv6 address`);
      seen.add(canonical);
    }
    out.addresses = [...seen];
  }
  if (o.match !== undefined || out.addresses !== undefined) {
    if (!Array.isArray(o.match) || o.match.length === 0) throw invalid(op, `match must be a non-empty array of ${MATCH_MODES.join(', ')}`);
    for (const m of o.match as unknown[]) {
      if (!MATCH_MODES.includes(m as ConntrackMatch)) throw invalid(op, `match: ${JSON.stringify(m)} is not one of ${MATCH_MODES.join(', ')}`);
    }
    out.match = [...new Set(o.match as ConntrackMatch[])];
  }
  if (o.protocols !== undefined) {
    if (!Array.isArray(o.protocols)) throw invalid(op, 'protocols must be an array of protocol names');
    for (const p of o.protocols as unknown[]) {
      if (!isConntrackProtocol(p)) throw invalid(op, `protocols: ${JSON.stringify(p)} is not a known protocol`);
    }
    out.protocols = [...new Set(o.protocols as ConntrackProtocol[])];
  }
  if (o.zone !== undefined) {
    if (typeof o.zone !== 'number' || !Number.isInteger(o.zone) || o.zone < 0 || o.zone > 65535) throw invalid(op, 'zone must be an integer in 0..65535');
    out.zone = o.zone;
  }
  return out;
}

export function checkDeleteOptions(op: string, options: DeleteConntrackOptions): CheckedDelete {
  if (!isObject(options)) throw invalid(op, 'options must be an object');
  const filter = checkFilter(op, options, true);
  if (options.dryRun !== undefined && typeof options.dryRun !== 'boolean') throw invalid(op, 'dryRun must be a boolean');
  return { ...filter, addresses: filter.addresses ?? [], dryRun: options.dryRun === true };
}

export function checkListOptions(op: string, options: ListConntrackOptions | undefined): CheckedList {
  const o = options ?? {};
  if (!isObject(o)) throw invalid(op, 'options must be an object');
  const filter: CheckedList = checkFilter(op, o, false);
  if (o.limit !== undefined) {
    if (typeof o.limit !== 'number' || !Number.isInteger(o.limit) || o.limit < 0) throw invalid(op, 'limit must be an integer >= 0');
    filter.limit = o.limit;
  }
  return filter;
}
