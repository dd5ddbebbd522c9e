/** Converts between the typed conntrack API and the addon's raw op arguments/results. */
import { protocolName, stateNumber, statusBits } from './conntrack-names.js';
import type { CheckedFilter } from './conntrack-validate.js';
import { PROTOCOL_NUMBERS } from './types.js';
import type {
  ConntrackDeleteIndexedResult,
  ConntrackProtocol,
  ConntrackVerifyResult,
  DeleteConntrackEntriesResult,
  DeleteConntrackResult,
  DeleteCountsByProtocol,
} from './types.js';

export interface RawFilterArgs {
  addresses?: string[];
  match?: string[];
  protocols?: number[];
  zone?: number;
}

export function toRawFilter(f: CheckedFilter): RawFilterArgs {
  const raw: RawFilterArgs = {};
  if (f.addresses !== undefined) raw.addresses = f.addresses;
  if (f.match.length > 0) raw.match = f.match;
  if (f.protocols !== undefined) raw.protocols = f.protocols.map((p) => PROTOCOL_NUMBERS[p]);
  if (f.zone !== undefined) raw.zone = f.zone;
  return raw;
}

export interface RawListResult {
  /** The entries as ct_records.h records (decodeEntryRecords). */
  records: ArrayBuffer;
  scanned: number;
  bufferGrowths: number;
  restarts: number;
  unparsed: number;
  ms: number;
  /** The pass's thread CPU time: ours, and the kernel's (the table walk runs in our recvmsg). */
  userMs: number;
  sysMs: number;
}

/**
 * The one answer of every delete op of the addon (ct_delete, ct_delete_tuples, ev_delete with
 * `fresh` added, ev_verify; delete_result_value in native/src/napi/napi_values.c): the public counts plus
 * diagnostics for tests and benches. A delete by tuple walks no table: its scanned, matched,
 * dumpRestarts, bufferGrowths and unparsed are 0.
 */
export interface RawDeleteResult extends Omit<DeleteConntrackResult, 'byProtocol'> {
  /** Keyed by IP protocol number. */
  byProtocol: Record<string, DeleteCountsByProtocol>;
  firstErrno: number;
  /** ENOENT answers re-checked by GET, and how many of those entries were still present (counted failed). */
  rechecked: number;
  stillPresent: number;
  sends: number;
  ackOverruns: number;
  resent: number;
  dumpRestarts: number;
  bufferGrowths: number;
  unparsed: number;
}

/** The by-protocol counts keyed by protocol name (`proto-<n>` for a number without one). */
function countsByProtocolKey(raw: RawDeleteResult): Record<string, DeleteCountsByProtocol> {
  const byProtocol: Record<string, DeleteCountsByProtocol> = {};
  for (const [n, counts] of Object.entries(raw.byProtocol)) byProtocol[protocolName(Number(n))] = counts;
  return byProtocol;
}

/** deleteConntrack's answer. */
export function toDeleteResult(raw: RawDeleteResult): DeleteConntrackResult {
  return { scanned: raw.scanned, matched: raw.matched, deleted: raw.deleted, alreadyGone: raw.alreadyGone, failed: raw.failed, byProtocol: countsByProtocolKey(raw), ms: raw.ms };
}

/** deleteConntrackEntries' answer. */
export function toEntriesDeleteResult(raw: RawDeleteResult): DeleteConntrackEntriesResult {
  return { deleted: raw.deleted, alreadyGone: raw.alreadyGone, failed: raw.failed, byProtocol: countsByProtocolKey(raw), ms: raw.ms };
}

/** The event index's deleteFlowsOf: per protocol name, the entries that left the kernel (deleted or already gone). */
export function toIndexDeleteResult(raw: RawDeleteResult & { fresh: boolean }): ConntrackDeleteIndexedResult {
  const byProtocol: Record<string, number> = {};
  for (const [n, counts] of Object.entries(raw.byProtocol)) {
    const gone = counts.deleted + counts.alreadyGone;
    if (gone === 0) continue;
    const name = protocolName(Number(n));
    byProtocol[name] = (byProtocol[name] ?? 0) + gone;
  }
  return { fresh: raw.fresh, deleted: raw.deleted, alreadyGone: raw.alreadyGone, failed: raw.failed, byProtocol, ms: raw.ms };
}

/** The event index's verify: the dump pass's counts. */
export function toVerifyResult(raw: RawDeleteResult): ConntrackVerifyResult {
  return { deleted: raw.deleted, alreadyGone: raw.alreadyGone, failed: raw.failed, scanned: raw.scanned, ms: raw.ms };
}

/**
 * TEST AND BENCH SUPPORT: entries created with IPCTNL_MSG_CT_NEW (not part of NetlinkApi).
 * `count` entries: entry i has orig src = origSrc + (i % srcCount), sport = srcPort +
 * floor(i / srcCount) % 60000, reply src = replySrc + (i % replySrcCount) (default origDst:
 * no NAT), reply dst/dport = orig src/sport. The last 32 bits of an address are incremented.
 */
export interface ConntrackFillSpec {
  protocol: ConntrackProtocol;
  origSrc: string;
  origDst: string;
  replySrc?: string;
  count?: number;
  srcCount?: number;
  replySrcCount?: number;
  srcPort?: number;
  dstPort?: number;
  replySrcPort?: number;
  /** TCP or SCTP state name (`ESTABLISHED`...). */
  state?: string;
  zone?: number;
  /** Which direction(s) `zone` covers: both (default, CTA_ZONE), or one (`--orig-zone` / `--reply-zone`). */
  zoneDirection?: 'both' | 'original' | 'reply';
  mark?: number;
  timeout?: number;
  /** `IPS_*` names to set (`ASSURED`, `SEEN_REPLY`, ...). */
  statusFlags?: string[];
  /** A real DNAT binding to replySrc:replySrcPort (CTA_NAT_DST): the entry gets IPS_DST_NAT, as kube-proxy's would. */
  dnat?: boolean;
}

export interface ConntrackFillResult {
  created: number;
  exists: number;
  failed: number;
  firstErrno: number;
  sends: number;
  ackOverruns: number;
  resent: number;
  ms: number;
}

const ZONE_DIRECTIONS = { original: 1, reply: 2, both: 3 } as const;

export function toRawFillSpec(spec: ConntrackFillSpec): Record<string, unknown> {
  const protocol = PROTOCOL_NUMBERS[spec.protocol];
  const { state, statusFlags, dnat, zoneDirection, ...rest } = spec;
  const raw: Record<string, unknown> = { ...rest, protocol };
  if (zoneDirection !== undefined) raw.zoneDir = ZONE_DIRECTIONS[zoneDirection];
  if (dnat === true) raw.dnat = 1;
  if (state !== undefined) {
    const n = stateNumber(protocol, state);
    if (n === undefined) throw new Error(`unknown ${spec.protocol} state ${state}`);
    raw.state = n;
  }
  if (statusFlags !== undefined) raw.status = statusBits(statusFlags);
  return raw;
}
