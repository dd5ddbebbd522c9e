/**
 * Open flows to a pod, from this node's conntrack table: every packet to a pod crosses its
 * node's conntrack, so the entries whose original destination or reply source is one of the
 * pod's IPs are its flows (direct, DNATed service traffic, and IPIP/DSR).
 *
 * An entry is an OPEN flow when:
 * - TCP: its state is not a closing one (FIN_WAIT, CLOSE_WAIT, LAST_ACK, TIME_WAIT, CLOSE);
 * - SCTP: likewise (SHUTDOWN_*, CLOSED are closing), and it was seen recently (below);
 * - UDP, SCTP, IPIP and every other protocol: it was SEEN within `flowIdleMs`.
 *
 * "Seen" is derived, as conntrack itself does not export a last-seen time: every packet
 * refreshes an entry's timeout to the protocol's full timeout, so
 *   idle = fullTimeout - remainingTimeout
 * with the full timeout the kernel applies (UDP: `nf_conntrack_udp_timeout_stream` when the
 * entry is ASSURED, else `nf_conntrack_udp_timeout`; SCTP: `..._sctp_timeout_established`;
 * everything else: `nf_conntrack_generic_timeout`), read from /proc/sys by `flow-timeouts.ts`.
 * An entry with more time left than the full timeout (a sysctl lowered since) counts as just seen.
 * We chose this over "any ASSURED, non-expired UDP entry is open" because a DNS-style
 * UDP entry stays ASSURED for 120 s after its last packet, which would make every drain of a
 * UDP service run to its maximum.
 */
import type { ConntrackApi, ConntrackEntry } from 'netlink-native/types';

export interface FlowTimeouts {
  udpMs: number;
  udpStreamMs: number;
  sctpEstablishedMs: number;
  genericMs: number;
}

/** The kernel defaults (6.x), used when /proc/sys cannot be read. */
export const DEFAULT_FLOW_TIMEOUTS: FlowTimeouts = {
  udpMs: 30_000,
  udpStreamMs: 120_000,
  sctpEstablishedMs: 210_000,
  genericMs: 600_000,
};

const TCP_CLOSING = new Set(['FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK', 'TIME_WAIT', 'CLOSE']);
const SCTP_CLOSING = new Set(['SHUTDOWN_SENT', 'SHUTDOWN_RECD', 'SHUTDOWN_ACK_SENT', 'CLOSED']);

function fullTimeoutMs(entry: ConntrackEntry, t: FlowTimeouts): number {
  switch (entry.protocol) {
    case 'udp':
    case 'udplite':
      return entry.statusFlags.includes('ASSURED') ? t.udpStreamMs : t.udpMs;
    case 'sctp':
      return t.sctpEstablishedMs;
    default:
      return t.genericMs;
  }
}

/** How long ago the entry last saw a packet (estimated, see above). */
export function idleMs(entry: ConntrackEntry, timeouts: FlowTimeouts): number {
  return Math.max(0, fullTimeoutMs(entry, timeouts) - entry.timeout * 1000);
}

export function isOpenFlow(entry: ConntrackEntry, flowIdleMs: number, timeouts: FlowTimeouts): boolean {
  const state = entry.state?.toUpperCase();
  if (entry.protocol === 'tcp') return state === undefined || !TCP_CLOSING.has(state);
  if (entry.protocol === 'sctp' && state !== undefined && SCTP_CLOSING.has(state)) return false;
  return idleMs(entry, timeouts) <= flowIdleMs;
}

export interface FlowCount {
  /** Open flows (the drain waits for zero). */
  open: number;
  /** Every entry that pointed at the pod's IPs. */
  entries: number;
  byProtocol: Record<string, number>;
}

export async function countOpenFlows(conntrack: ConntrackApi, ips: readonly string[], flowIdleMs: number, timeouts: FlowTimeouts): Promise<FlowCount> {
  if (ips.length === 0) return { open: 0, entries: 0, byProtocol: {} };
  const entries = await conntrack.listConntrack({ addresses: [...ips], match: ['origDst', 'replySrc'] });
  const byProtocol: Record<string, number> = {};
  let open = 0;
  for (const entry of entries) {
    if (!isOpenFlow(entry, flowIdleMs, timeouts)) continue;
    open += 1;
    byProtocol[entry.protocol] = (byProtocol[entry.protocol] ?? 0) + 1;
  }
  return { open, entries: entries.length, byProtocol };
}
