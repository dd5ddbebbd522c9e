import type { FlowVisibility } from '../flow-visibility.js';
import { IPVS_SYSCTLS, type AgentReading, type DoctorReadings, type Finding } from './readings.js';

/** Fill ratio from which the table counts as a problem. */
export const FILL_PROBLEM_RATIO = 0.75;
/** kube-proxy's `--conntrack-tcp-timeout-established` default (24 h). */
export const TCP_ESTABLISHED_ADVISED = 86_400;
export const UDP_TIMEOUT_ADVISED = 60;
export const UDP_STREAM_TIMEOUT_ADVISED = 180;

/** Every finding, in reading order: conntrack, timeouts, IPVS, agent, stale entries. */
export function diagnose(r: DoctorReadings): Finding[] {
  return [
    fill(r),
    ...cpuCounters(r),
    tcpEstablished(r.netfilter.nf_conntrack_tcp_timeout_established),
    udpTimeout('nf_conntrack_udp_timeout', r.netfilter.nf_conntrack_udp_timeout, UDP_TIMEOUT_ADVISED, 'a UDP flow that saw traffic in one direction only (a DNS query to a dead pod)'),
    udpTimeout('nf_conntrack_udp_timeout_stream', r.netfilter.nf_conntrack_udp_timeout_stream, UDP_STREAM_TIMEOUT_ADVISED, 'a UDP flow that saw replies (an assured stream)'),
    ...ipvs(r),
    flowVisibility(r.flowVisibility),
    ...agent(r.agent),
    stale(r.stale),
  ];
}

export function hasProblem(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.problem);
}

function fill(r: DoctorReadings): Finding {
  if (r.conntrackCount === undefined || r.conntrackMax === undefined) {
    return { check: 'conntrack.fill', value: null, problem: true, why: 'nf_conntrack_count/nf_conntrack_max could not be read: is the nf_conntrack module loaded and /proc/sys/net/netfilter readable?' };
  }
  const ratio = r.conntrackMax > 0 ? r.conntrackCount / r.conntrackMax : 0;
  const pct = Math.round(ratio * 1000) / 10;
  const value = `${r.conntrackCount}/${r.conntrackMax} (${pct}%)`;
  if (ratio >= FILL_PROBLEM_RATIO) {
    return { check: 'conntrack.fill', value, problem: true, why: `the conntrack table is ${pct}% full; at 100% the kernel drops new connections (early_drop, then drop). Raise net.netfilter.nf_conntrack_max (and nf_conntrack_buckets) from the root namespace, or find what fills it (\`conndrain conntrack stats\`, \`conndrain conntrack stale\`).` };
  }
  return { check: 'conntrack.fill', value, problem: false, why: `the conntrack table is ${pct}% full (a problem from ${FILL_PROBLEM_RATIO * 100}%).` };
}

function cpuCounters(r: DoctorReadings): Finding[] {
  const counters = [
    { key: 'insertFailed', check: 'conntrack.insert_failed', hurt: 'a packet\'s new entry clashed with an existing one or the table was full when it was confirmed; the packet was dropped (classic cause: parallel UDP DNS queries from one socket, A and AAAA). Use `single-request-reopen` in resolv.conf or NodeLocal DNSCache, and check the fill above' },
    { key: 'drop', check: 'conntrack.drop', hurt: 'packets were dropped because the table was full and nothing could be evicted: new connections failed. Raise nf_conntrack_max from the root namespace' },
    { key: 'earlyDrop', check: 'conntrack.early_drop', hurt: 'the table was full and the kernel evicted unassured entries to make room; connections being set up may have been lost. Raise nf_conntrack_max from the root namespace' },
  ] as const;
  return counters.map(({ key, check, hurt }) => {
    if (r.cpus === undefined) return { check, value: null, problem: false, why: '/proc/net/stat/nf_conntrack could not be read; counter not checked.' };
    const total = r.cpus.reduce((sum, c) => sum + c[key], 0);
    if (total === 0) return { check, value: 0, problem: false, why: 'zero on every CPU since the namespace was created.' };
    const perCpu = r.cpus.filter((c) => c[key] > 0).map((c) => `cpu${c.cpu}=${c[key]}`).join(' ');
    return { check, value: total, problem: true, why: `${hurt}. Per CPU: ${perCpu}. The counter counts since boot (or since the namespace was created): watch whether it still rises.` };
  });
}

function readNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text.trim());
  return Number.isFinite(n) ? n : undefined;
}

function tcpEstablished(text: string | undefined): Finding {
  const check = 'sysctl.nf_conntrack_tcp_timeout_established';
  const seconds = readNumber(text);
  if (seconds === undefined) return { check, value: null, problem: false, why: 'not readable in this namespace; not checked.' };
  if (seconds > TCP_ESTABLISHED_ADVISED) {
    return { check, value: seconds, problem: true, why: `an established TCP entry lives ${humanSeconds(seconds)} without traffic, so a ghost entry to a deleted pod can steer a reused client port that long. kube-proxy's default is ${TCP_ESTABLISHED_ADVISED} (24 h): set net.netfilter.nf_conntrack_tcp_timeout_established=${TCP_ESTABLISHED_ADVISED}, or run the agent with --janitor.` };
  }
  return { check, value: seconds, problem: false, why: `idle established TCP entries expire after ${humanSeconds(seconds)} (at most ${TCP_ESTABLISHED_ADVISED} advised).` };
}

function udpTimeout(name: string, text: string | undefined, advised: number, what: string): Finding {
  const check = `sysctl.${name}`;
  const seconds = readNumber(text);
  if (seconds === undefined) return { check, value: null, problem: false, why: 'not readable in this namespace; not checked.' };
  if (seconds > advised) {
    return { check, value: seconds, problem: true, why: `${what} keeps its entry ${humanSeconds(seconds)} after its last packet; a client that retries sooner keeps a ghost entry to a deleted pod alive for good (DNS timeouts). Lower it to ${advised} or less, and run the agent with --janitor.` };
  }
  return { check, value: seconds, problem: false, why: `${what} keeps its entry ${humanSeconds(seconds)} after its last packet; a client retrying faster keeps a ghost entry alive, which the janitor removes.` };
}

function ipvs(r: DoctorReadings): Finding[] {
  if (r.ipvs === undefined) {
    return [{ check: 'ipvs', value: 'absent', problem: false, why: 'IPVS is not loaded in this network namespace (/proc/sys/net/ipv4/vs is missing): the service proxy does not use IPVS here, so the IPVS checks do not apply. Not an error.' }];
  }
  const values = r.ipvs;
  return [{ check: 'ipvs', value: 'present', problem: false, why: 'IPVS is loaded in this network namespace; its drain-relevant sysctls follow.' }, ...IPVS_SYSCTLS.map((name) => ipvsSysctl(name, readNumber(values[name]), r.kernelRelease))];
}

function ipvsSysctl(name: (typeof IPVS_SYSCTLS)[number], value: number | undefined, kernel: string | undefined): Finding {
  const check = `ipvs.${name}`;
  if (value === undefined) return { check, value: null, problem: false, why: `net.ipv4.vs.${name} is not readable on this kernel; not checked.` };
  switch (name) {
    case 'expire_nodest_conn':
      return value === 0
        ? { check, value, problem: true, why: 'packets of a connection whose real server was deleted are silently dropped until the IPVS connection entry times out: clients hang instead of reconnecting. Set net.ipv4.vs.expire_nodest_conn=1 (kube-proxy does in IPVS mode).' }
        : { check, value, problem: false, why: 'connections to a deleted real server are expired at their next packet, so clients reconnect at once.' };
    case 'sloppy_tcp':
      return value === 0
        ? { check, value, problem: true, why: 'IPVS creates state only from a TCP SYN: a connection that moves to this node mid-stream (the node carrying it died, ECMP/BGP rehash) is not picked up and breaks. For drains across nodes (DSR, Maglev) set net.ipv4.vs.sloppy_tcp=1.' }
        : { check, value, problem: false, why: 'IPVS picks up TCP connections mid-stream, so a flow that moves here from another node survives.' };
    case 'conn_reuse_mode': {
      if (value === 0) {
        return { check, value, problem: true, why: 'a new connection that reuses a client port of an old IPVS connection is sent to the old real server without scheduling, even when that server is draining at weight 0: drains never finish for busy clients. Set net.ipv4.vs.conn_reuse_mode=1 (kernel 5.9 or later has no 1 s SYN delay with it).' };
      }
      const old = kernelBefore(kernel, 5, 9);
      if (old === true) {
        return { check, value, problem: true, why: `on kernel ${kernel ?? '?'} (before 5.9) conn_reuse_mode=1 drops the first SYN of a reused port when the old connection's real server is gone or at weight 0: a 1 s connect delay during drains. Upgrade the kernel; kube-proxy sets 0 on such kernels, which pins reused ports to draining servers.` };
      }
      return { check, value, problem: false, why: 'connections reusing a client port are rescheduled, so they do not land on a draining (weight 0) server.' };
    }
    case 'expire_quiescent_template':
      return value === 0
        ? { check, value, problem: true, why: 'with session affinity (persistent services), a client\'s persistence template keeps sending its new connections to a draining server at weight 0 until the template expires. Set net.ipv4.vs.expire_quiescent_template=1 (matters for services with sessionAffinity: ClientIP).' }
        : { check, value, problem: false, why: 'persistence templates to a draining (weight 0) server expire, so new connections of a persistent client go to a serving pod.' };
  }
}

function flowVisibility(v: FlowVisibility | undefined): Finding {
  const check = 'flows.visibility';
  if (v === undefined) return { check, value: null, problem: false, why: 'the datapath was not probed; not checked.' };
  if (v.visible) return { check, value: 'conntrack', problem: false, why: `${v.reason}; adaptive drains end as soon as the pod's flows close.` };
  return { check, value: 'unknown (eBPF datapath)', problem: true, why: `${v.reason}. The agent (--flow-visibility=auto) treats open flows as unknown here: every adaptive drain lasts its maximum (conndrain.io/drain) and its answer, log line and Events say why. Size conndrain.io/drain for that, or use hook kind sleep.` };
}

function agent(a: AgentReading | undefined): Finding[] {
  if (a === undefined) return [{ check: 'agent', value: 'not checked', problem: false, why: 'the agent was not checked (no --agent-url).' }];
  if ('error' in a.health) {
    return [{ check: 'agent', value: `unreachable (${a.health.error})`, problem: true, why: `no conndrain agent answers at ${a.url}/healthz: draining pods on this node get no IPVS hold and no conntrack cleanup. Check the conndrain-agent DaemonSet pod of this node (kubectl -n conndrain-agent get pods -o wide), or give --agent-url.` }];
  }
  if (a.health.status !== 200) {
    return [{ check: 'agent', value: `HTTP ${a.health.status}`, problem: true, why: `the agent at ${a.url} answers /healthz with ${a.health.status}: it runs but is unhealthy; read its logs (kubectl -n conndrain-agent logs <agent pod>).` }];
  }
  const ipvsNote = a.ipvsAvailable === 0 ? ' It runs conntrack-only (no IPVS on this node).' : '';
  const held: Finding = a.serversHeld === undefined
    ? { check: 'agent.ipvs_servers_held', value: null, problem: false, why: `the agent's /metrics has no conndrain_ipvs_servers_held; holds not known.${ipvsNote}` }
    : { check: 'agent.ipvs_servers_held', value: a.serversHeld, problem: false, why: a.serversHeld > 0 ? `the agent holds ${a.serversHeld} IPVS real server(s) of draining pods at weight 0; they are released when the pods are gone.${ipvsNote}` : `the agent holds nothing: no pod on the cluster is draining with an IPVS server here.${ipvsNote}` };
  return [{ check: 'agent', value: 'running', problem: false, why: `the agent answers ${a.url}/healthz with 200.` }, held];
}

function stale(s: DoctorReadings['stale']): Finding {
  const check = 'conntrack.stale';
  if (s === undefined) return { check, value: null, problem: false, why: 'stale entries not counted: give --endpoints FILE (EndpointSlices, e.g. `kubectl get endpointslices,pods -A -o yaml`).' };
  if (typeof s === 'string') return { check, value: null, problem: true, why: `stale entries could not be counted: ${s}` };
  const total = Object.values(s.byProtocol).reduce((a, b) => a + b, 0);
  if (total === 0) return { check, value: 0, problem: false, why: 'every NAT\'ed entry points at an address an endpoint or a live pod owns.' };
  const byProtocol = Object.entries(s.byProtocol).map(([p, n]) => `${p}=${n}`).join(' ');
  const top = s.topServices.slice(0, 3).map((t) => `${t.service} (${t.count})`).join(', ');
  return { check, value: total, problem: true, why: `${total} NAT'ed entries (${byProtocol}) point at addresses no endpoint and no live pod owns (ghost connections), most for ${top}. List them with \`conndrain conntrack stale\`, remove them with \`--delete\`, or run the agent with --janitor.` };
}

function kernelBefore(release: string | undefined, major: number, minor: number): boolean | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release ?? '');
  if (m === null) return undefined;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj < major || (maj === major && min < minor);
}

function humanSeconds(seconds: number): string {
  if (seconds >= 86_400 && seconds % 3600 === 0) return `${seconds} s (${Math.round((seconds / 86_400) * 10) / 10} days)`;
  if (seconds >= 3600) return `${seconds} s (${Math.round((seconds / 3600) * 10) / 10} h)`;
  return `${seconds} s`;
}
