import type { FlowVisibility } from '../flow-visibility.js';

/**
 * Raw readings of one node (or network namespace), gathered by the CLI. `undefined` means
 * "could not be read"; the findings say so instead of guessing.
 */
export interface CpuCounters {
  cpu: number;
  insertFailed: number;
  drop: number;
  earlyDrop: number;
}

export interface AgentReading {
  url: string;
  /** HTTP status of GET /healthz, or the connection error. */
  health: { status: number } | { error: string };
  /** Sum of `conndrain_ipvs_servers_held` from /metrics; undefined when not exported or not readable. */
  serversHeld: number | undefined;
  /** `conndrain_ipvs_available` when exported. */
  ipvsAvailable?: number | undefined;
}

export interface StaleReading {
  /** Stale entries by protocol. */
  byProtocol: Record<string, number>;
  /** Stale entries by service address:port (protocol first), largest first. */
  topServices: Array<{ service: string; count: number }>;
}

export interface DoctorReadings {
  conntrackCount: number | undefined;
  conntrackMax: number | undefined;
  /** Per-CPU counters (/proc/net/stat/nf_conntrack); undefined when not readable. */
  cpus: CpuCounters[] | undefined;
  /** `/proc/sys/net/netfilter/<name>` values by name (only those read). */
  netfilter: Record<string, string | undefined>;
  /** `/proc/sys/net/ipv4/vs/<name>` values; `undefined` when IPVS is not loaded in this namespace. */
  ipvs: Record<string, string | undefined> | undefined;
  /** Kernel release (`uname -r`), for version-dependent advice. */
  kernelRelease: string | undefined;
  /** Undefined when not checked. */
  agent: AgentReading | undefined;
  /** Stale entries; a string when they could not be counted (why), undefined when not asked. */
  stale: StaleReading | string | undefined;
  /** Whether netfilter conntrack sees pod traffic here (the agent's --flow-visibility=auto probe); undefined when not probed. */
  flowVisibility?: FlowVisibility | undefined;
}

export interface Finding {
  /** Stable name of the check (`conntrack.fill`, `ipvs.sloppy_tcp`, ...). */
  check: string;
  /** What was read: a number, a short text, or null when it could not be read. */
  value: number | string | null;
  problem: boolean;
  /** What it means and what to do, in an operator's words. */
  why: string;
}

/** The netfilter sysctls the doctor reads. */
export const NETFILTER_SYSCTLS = ['nf_conntrack_tcp_timeout_established', 'nf_conntrack_udp_timeout', 'nf_conntrack_udp_timeout_stream'] as const;
/** The IPVS sysctls that matter for drains. */
export const IPVS_SYSCTLS = ['expire_nodest_conn', 'sloppy_tcp', 'conn_reuse_mode', 'expire_quiescent_template'] as const;
