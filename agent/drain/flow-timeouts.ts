/** Reads the conntrack timeouts of this network namespace (for flows.ts), falling back to the kernel defaults. */
import { readFileSync } from 'node:fs';
import { DEFAULT_FLOW_TIMEOUTS, type FlowTimeouts } from './flows.js';

const DIR = '/proc/sys/net/netfilter';

function readSeconds(name: string, fallbackMs: number): number {
  try {
    const value = Number.parseInt(readFileSync(`${DIR}/${name}`, 'utf8').trim(), 10);
    return Number.isFinite(value) && value > 0 ? value * 1000 : fallbackMs;
  } catch {
    return fallbackMs;
  }
}

export function readFlowTimeouts(): FlowTimeouts {
  const d = DEFAULT_FLOW_TIMEOUTS;
  return {
    udpMs: readSeconds('nf_conntrack_udp_timeout', d.udpMs),
    udpStreamMs: readSeconds('nf_conntrack_udp_timeout_stream', d.udpStreamMs),
    sctpEstablishedMs: readSeconds('nf_conntrack_sctp_timeout_established', d.sctpEstablishedMs),
    genericMs: readSeconds('nf_conntrack_generic_timeout', d.genericMs),
  };
}
