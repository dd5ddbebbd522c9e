/**
 * scanDnatEntries, the parts shared by the addon wrapper and the in-memory stand-in: argument
 * checks (same NetlinkError for both) and the ownership rule of ct_scan.c, in TypeScript for
 * the stand-in. The contract suite runs both.
 */
import { constants } from 'node:os';
import { isIP } from 'node:net';
import { addressKey, formatIpv4 } from './conntrack-address.js';
import { isConntrackProtocol } from './conntrack-names.js';
import { PROTOCOL_NUMBERS } from './types.js';
import { NetlinkError, type ConntrackEntry, type ScanDnatOptions } from './types.js';

/** An owned target as the addon takes it: an address, or many IPv4 addresses (`ipv4`), with a protocol number. */
export type RawOwnedTarget = ({ address: string } | { ipv4: Int32Array | Uint32Array }) & {
  protocol?: number;
  port?: number;
};

export interface CheckedScan {
  ownedTargets: RawOwnedTarget[];
  limit?: number;
  batchSize?: number;
}

/** Default candidates per onEntries batch (CT_SCAN_DEFAULT_BATCH in ct_scan_napi.c). */
export const DEFAULT_SCAN_BATCH = 1024;

function invalid(op: string, message: string): NetlinkError {
  return new NetlinkError(op, constants.errno.EINVAL, 'EINVAL', message);
}

export function checkScanOptions(op: string, options: ScanDnatOptions): CheckedScan {
  if (typeof options !== 'object' || options === null) throw invalid(op, 'options must be an object');
  if (!Array.isArray(options.ownedTargets)) throw invalid(op, 'ownedTargets must be an array');
  const ownedTargets = (options.ownedTargets as unknown[]).map((t, i): RawOwnedTarget => {
    const target = (typeof t === 'object' && t !== null ? t : {}) as { address?: unknown; ipv4?: unknown; protocol?: unknown; port?: unknown };
    const ipv4 = target.ipv4 instanceof Int32Array || target.ipv4 instanceof Uint32Array ? target.ipv4 : undefined;
    if (target.ipv4 !== undefined && ipv4 === undefined) throw invalid(op, `ownedTargets[${i}].ipv4 must be an Int32Array or Uint32Array`);
    // Any spelling: the C side (inet_pton) and the stand-in (addressKey) compare bytes.
    const address = typeof target.address === 'string' && isIP(target.address) !== 0 ? target.address : undefined;
    if (address === undefined && ipv4 === undefined) throw invalid(op, `ownedTargets[${i}].address must be an IPv4 or IPv6 address`);
    if (target.protocol !== undefined && !isConntrackProtocol(target.protocol)) throw invalid(op, `ownedTargets[${i}].protocol is not a known protocol`);
    if (target.port !== undefined && (typeof target.port !== 'number' || !Number.isInteger(target.port) || target.port < 0 || target.port > 65535)) throw invalid(op, `ownedTargets[${i}].port must be an integer in 0..65535`);
    if (target.port !== undefined && target.protocol === undefined) throw invalid(op, `ownedTargets[${i}]: a port needs a protocol`);
    return { ...(ipv4 === undefined ? { address: address as string } : { ipv4 }), ...(target.protocol === undefined ? {} : { protocol: PROTOCOL_NUMBERS[target.protocol] }), ...(target.port === undefined ? {} : { port: target.port }) };
  });
  if (options.limit !== undefined && (typeof options.limit !== 'number' || !Number.isInteger(options.limit) || options.limit < 0)) throw invalid(op, 'limit must be an integer >= 0');
  if (options.onEntries !== undefined && typeof options.onEntries !== 'function') throw invalid(op, 'onEntries must be a function');
  if (options.batchSize !== undefined && (typeof options.batchSize !== 'number' || !Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > 1 << 20)) throw invalid(op, 'batchSize must be an integer in 1..1048576');
  return { ownedTargets, ...(options.limit === undefined ? {} : { limit: options.limit }), ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }) };
}

/** ct_target_set_owns() in TypeScript (for the stand-in). */
export function ownedMatcher(targets: readonly RawOwnedTarget[]): (e: ConntrackEntry) => boolean {
  const keys = new Set<string>();
  const add = (address: string, t: RawOwnedTarget): void => {
    const a = addressKey(address) ?? address;
    keys.add(`seen|${a}`);
    keys.add(t.protocol === undefined ? `any|${a}` : t.port === undefined ? `proto|${a}|${t.protocol}` : `exact|${a}|${t.protocol}|${t.port}`);
  };
  for (const t of targets) {
    if ('address' in t) add(t.address, t);
    else for (const w of t.ipv4) add(formatIpv4(w), t);
  }
  return (e) => {
    const a = addressKey(e.reply.src) ?? e.reply.src;
    if (!keys.has(`seen|${a}`)) return false;
    if (keys.has(`any|${a}`) || keys.has(`proto|${a}|${e.protocolNumber}`)) return true;
    if (e.reply.srcPort === undefined) return true;
    return keys.has(`exact|${a}|${e.protocolNumber}|${e.reply.srcPort}`);
  };
}
