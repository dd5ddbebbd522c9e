/**
 * conndrain's nftables table, as libnftables JSON (`nft -j -f -`, schema in
 * libnftables-json(5)): one batch that replaces the whole table atomically (add, delete and
 * re-create the table in one transaction; nft runs a file as a single netlink batch, so the
 * kernel never shows a half-built table).
 *
 * table inet conndrain
 *   chain prerouting: type filter, hook prerouting, priority -140 (NF_IP_PRI_MANGLE + 10)
 *     one rule per active twin: TCP to the held service's VIP:port (a fwmark service: packets
 *     carrying its mark) WITHOUT SYN (`tcp flags & syn == 0`) -> `meta mark set <twin mark>`.
 *     SYNs are untouched: new connections keep going to the original service, where the
 *     draining pod is at weight 0 (unavailable, ip_vs_mh.c `is_unavailable`).
 *   chain twins (no hook, never jumped to): the registry, one rule per twin conndrain owns,
 *     its comment naming mark and original, so an agent restart knows its twins from the kernel.
 *
 * Priority: service proxies mark in the mangle table's PREROUTING at -150 (kube-router's DSR
 * fwmark rules; iptables-nft registers mangle at NF_IP_PRI_MANGLE = -150). At -140 we run after
 * them (a strictly greater priority: hooks of equal priority have no defined order), so a
 * fwmark service's mark is already on the packet, and before conntrack's DNAT (-100). IPVS
 * reads the mark later, in LOCAL_IN (ip_vs_in_hook at NF_IP_PRI_NAT_SRC - 1):
 * ip_vs_ctl.c `ip_vs_service_find` "Check the table hashed by fwmark first" when skb->mark is
 * set, so the twin wins over the VIP:port service. The mark must equal the twin's exactly, so
 * the rule sets the whole mark; a proxy that ORs bits in afterwards (kube-proxy's
 * KUBE-MARK-MASQ 0x4000 in nat PREROUTING at -100) makes the lookup fall back to the original
 * service: no pinning for those packets, nothing worse than without conndrain.
 * Packets of flows that already have an IPVS connection entry on this node are unaffected by
 * the mark: ip_vs_core.c `ip_vs_in_hook` looks the connection up (`conn_in_get`, by addresses
 * and ports, not mark) before `ip_vs_try_to_schedule`. A non-SYN packet is scheduled at all
 * only with sloppy_tcp=1 (ip_vs_proto_tcp.c `tcp_conn_schedule`:
 * `if (th->rst || !(sysctl_sloppy_tcp(ipvs) || th->syn)) return 1;`).
 */
import type { IpvsServiceKey } from 'netlink-native/types';
import { formatMark } from './fwmark-range.js';
import { isObject as isRecord } from '../inject/json.js';
import { formatServiceKey, parseServiceKey } from 'netlink-native/ipvs-keys';
import type { RegistryEntry, TwinPlan } from './twin-plan.js';

export const NFT_FAMILY = 'inet';
export const NFT_TABLE = 'conndrain';
export const NFT_PREROUTING_CHAIN = 'prerouting';
export const NFT_REGISTRY_CHAIN = 'twins';
/** NF_IP_PRI_MANGLE (-150) + 10: after the proxies' own packet marking. */
export const NFT_PREROUTING_PRIORITY = -140;
const REGISTRY_PREFIX = 'conndrain-twin';
/** nft's limit on a comment. */
const COMMENT_MAX = 128;

export type NftCommand = Record<string, unknown>;
export interface NftBatch {
  nftables: NftCommand[];
}

const TABLE = { family: NFT_FAMILY, name: NFT_TABLE };
const META: NftCommand = { metainfo: { json_schema_version: 1 } };

function match(left: unknown, right: unknown): NftCommand {
  return { match: { op: '==', left, right } };
}

function noSyn(): NftCommand {
  return match({ '&': [{ payload: { protocol: 'tcp', field: 'flags' } }, 'syn'] }, 0);
}

/** What selects the held service's packets. */
export function selectService(key: IpvsServiceKey): NftCommand[] {
  if (key.fwmark !== undefined) {
    return [match({ meta: { key: 'nfproto' } }, key.family === 6 ? 'ipv6' : 'ipv4'), match({ meta: { key: 'mark' } }, key.fwmark)];
  }
  return [
    match({ payload: { protocol: key.family === 6 ? 'ip6' : 'ip', field: 'daddr' } }, key.address.toLowerCase()),
    match({ payload: { protocol: 'tcp', field: 'dport' } }, key.port),
  ];
}

function clip(text: string): string {
  return text.length <= COMMENT_MAX ? text : `${text.slice(0, COMMENT_MAX - 3)}...`;
}

export function registryComment(entry: RegistryEntry): string {
  return `${REGISTRY_PREFIX} fwmark=${formatMark(entry.fwmark)} original=${formatServiceKey(entry.original)}`;
}

function pinRule(twin: TwinPlan): NftCommand {
  return {
    add: {
      rule: {
        family: NFT_FAMILY, table: NFT_TABLE, chain: NFT_PREROUTING_CHAIN,
        comment: clip(`pin ${formatServiceKey(twin.original)} -> ${formatMark(twin.fwmark)}${twin.pods.length > 0 ? ` (${twin.pods.join(', ')})` : ''}`),
        expr: [...selectService(twin.original), noSyn(), { counter: { packets: 0, bytes: 0 } }, { mangle: { key: { meta: { key: 'mark' } }, value: twin.fwmark } }],
      },
    },
  };
}

function registryRule(twin: TwinPlan): NftCommand {
  return { add: { rule: { family: NFT_FAMILY, table: NFT_TABLE, chain: NFT_REGISTRY_CHAIN, comment: registryComment(twin), expr: [{ accept: null }] } } };
}

/** Removes conndrain's table if present (add-then-delete: no error when it is absent). */
export function buildDeleteTable(): NftBatch {
  return { nftables: [META, { add: { table: TABLE } }, { delete: { table: TABLE } }] };
}

/**
 * The batch that makes conndrain's table exactly this: pin rules for active twins, registry
 * entries for every twin that still exists (active, retiring, or about to be deleted). No twin:
 * the table is removed, so nothing of conndrain is left in nftables.
 */
export function buildRuleset(twins: readonly TwinPlan[]): NftBatch {
  if (twins.length === 0) return buildDeleteTable();
  const ordered = [...twins].sort((a, b) => a.fwmark - b.fwmark);
  return {
    nftables: [
      META,
      { add: { table: TABLE } },
      { delete: { table: TABLE } },
      { add: { table: TABLE } },
      { add: { chain: { family: NFT_FAMILY, table: NFT_TABLE, name: NFT_PREROUTING_CHAIN, type: 'filter', hook: 'prerouting', prio: NFT_PREROUTING_PRIORITY, policy: 'accept' } } },
      { add: { chain: { family: NFT_FAMILY, table: NFT_TABLE, name: NFT_REGISTRY_CHAIN } } },
      ...ordered.filter((t) => t.state === 'active').map(pinRule),
      ...ordered.map(registryRule),
    ],
  };
}

/**
 * The twins recorded in a `nft -j list table inet conndrain` answer (JSON, never CLI text).
 * Anything that is not a well-formed registry rule is ignored.
 */
export function parseRegistry(listing: unknown): RegistryEntry[] {
  if (!isRecord(listing) || !Array.isArray(listing.nftables)) return [];
  const out: RegistryEntry[] = [];
  for (const item of listing.nftables as unknown[]) {
    if (!isRecord(item) || !isRecord(item.rule)) continue;
    const rule = item.rule;
    if (rule.table !== NFT_TABLE || rule.family !== NFT_FAMILY || rule.chain !== NFT_REGISTRY_CHAIN || typeof rule.comment !== 'string') continue;
    const found = /^conndrain-twin fwmark=(0x[0-9a-f]{8}) original=(\S+)$/.exec(rule.comment);
    if (found === null) continue;
    const original = parseServiceKey(found[2] ?? '');
    const fwmark = Number(found[1]);
    if (original === undefined || !(fwmark > 0)) continue;
    out.push({ original, fwmark });
  }
  return out;
}

/** Packets each pin rule has marked, by twin mark (its counter), from a JSON listing. */
export function parsePinCounters(listing: unknown): Map<number, number> {
  const out = new Map<number, number>();
  if (!isRecord(listing) || !Array.isArray(listing.nftables)) return out;
  for (const item of listing.nftables as unknown[]) {
    if (!isRecord(item) || !isRecord(item.rule) || item.rule.chain !== NFT_PREROUTING_CHAIN || !Array.isArray(item.rule.expr)) continue;
    let packets: number | undefined;
    let mark: number | undefined;
    for (const expr of item.rule.expr as unknown[]) {
      if (!isRecord(expr)) continue;
      if (isRecord(expr.counter) && typeof expr.counter.packets === 'number') packets = expr.counter.packets;
      if (isRecord(expr.mangle) && typeof expr.mangle.value === 'number') mark = expr.mangle.value;
    }
    if (mark !== undefined && packets !== undefined) out.set(mark, packets);
  }
  return out;
}
