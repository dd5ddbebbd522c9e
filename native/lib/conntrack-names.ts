/** Names of conntrack numbers: IP protocols, TCP/SCTP states, `IPS_*` status bits. */
import { PROTOCOL_NUMBERS, type ConntrackProtocol, type UnnamedProtocol } from './types.js';

const PROTOCOL_NAMES = new Map<number, ConntrackProtocol>(
  Object.entries(PROTOCOL_NUMBERS).map(([name, n]) => [n, name as ConntrackProtocol]),
);

export function isConntrackProtocol(name: unknown): name is ConntrackProtocol {
  return typeof name === 'string' && Object.hasOwn(PROTOCOL_NUMBERS, name);
}

/** `tcp`, `udp`... or `proto-<n>` for a protocol number without a name: the one rule for both. */
export function protocolName(n: number): ConntrackProtocol | UnnamedProtocol {
  return PROTOCOL_NAMES.get(n) ?? `proto-${n}`;
}

/** include/uapi/linux/netfilter/nf_conntrack_tcp.h `enum tcp_conntrack`. */
const TCP_STATES = ['NONE', 'SYN_SENT', 'SYN_RECV', 'ESTABLISHED', 'FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK', 'TIME_WAIT', 'CLOSE', 'SYN_SENT2'];
/** include/uapi/linux/netfilter/nf_conntrack_sctp.h `enum sctp_conntrack`. */
const SCTP_STATES = ['NONE', 'CLOSED', 'COOKIE_WAIT', 'COOKIE_ECHOED', 'ESTABLISHED', 'SHUTDOWN_SENT', 'SHUTDOWN_RECD', 'SHUTDOWN_ACK_SENT', 'HEARTBEAT_SENT', 'HEARTBEAT_ACKED'];
/** include/uapi/linux/netfilter/nf_conntrack_dccp.h... `enum ct_dccp_states`. */
const DCCP_STATES = ['NONE', 'REQUEST', 'RESPOND', 'PARTOPEN', 'OPEN', 'CLOSEREQ', 'CLOSING', 'TIMEWAIT', 'IGNORE', 'INVALID'];

export function stateName(protocolNumber: number, state: number): string {
  const table = protocolNumber === 6 ? TCP_STATES : protocolNumber === 132 ? SCTP_STATES : protocolNumber === 33 ? DCCP_STATES : [];
  return table[state] ?? `STATE_${state}`;
}

export function stateNumber(protocolNumber: number, name: string): number | undefined {
  const table = protocolNumber === 6 ? TCP_STATES : protocolNumber === 132 ? SCTP_STATES : protocolNumber === 33 ? DCCP_STATES : [];
  const i = table.indexOf(name);
  return i < 0 ? undefined : i;
}

/** include/uapi/linux/netfilter/nf_conntrack_common.h `enum ip_conntrack_status` bits. */
const STATUS_BITS = ['EXPECTED', 'SEEN_REPLY', 'ASSURED', 'CONFIRMED', 'SRC_NAT', 'DST_NAT', 'SEQ_ADJUST', 'SRC_NAT_DONE', 'DST_NAT_DONE', 'DYING', 'FIXED_TIMEOUT', 'TEMPLATE', 'NAT_CLASH', 'HELPER', 'OFFLOAD', 'HW_OFFLOAD'];

/** One frozen array per distinct status word: a dump has a handful of them and a million entries. */
const flagNamesCache = new Map<number, string[]>();
const FLAG_NAMES_CACHE_LIMIT = 4096;

export function statusFlagNames(status: number): string[] {
  const cached = flagNamesCache.get(status);
  if (cached !== undefined) return cached;
  const names = Object.freeze(computeFlagNames(status)) as string[];
  if (flagNamesCache.size < FLAG_NAMES_CACHE_LIMIT) flagNamesCache.set(status, names);
  return names;
}

function computeFlagNames(status: number): string[] {
  const names: string[] = [];
  for (let bit = 0; bit < 32; bit++) {
    if ((status >>> bit) & 1) names.push(STATUS_BITS[bit] ?? `BIT_${bit}`);
  }
  return names;
}

export function statusBits(names: readonly string[]): number {
  let status = 0;
  for (const name of names) {
    const bit = STATUS_BITS.indexOf(name);
    if (bit >= 0) status |= 1 << bit;
  }
  return status >>> 0;
}
