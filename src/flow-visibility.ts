/**
 * Whether this node's netfilter conntrack sees the pods' flows. An adaptive drain ends when
 * conntrack shows no open flow to the pod; on a node whose pod traffic bypasses conntrack (an
 * eBPF datapath: Cilium, Calico's eBPF mode) conntrack shows nothing, which would end every
 * drain at min-drain: silently wrong. There, open flows are unknown and a drain lasts its
 * maximum. This file judges signals read by the agent and the doctor (agent/drain/flow-visibility-probe.ts).
 */

export type FlowVisibilityMode = 'auto' | 'conntrack' | 'none';
export const FLOW_VISIBILITY_MODES: readonly FlowVisibilityMode[] = ['auto', 'conntrack', 'none'];

export interface FlowVisibility {
  /** True when conntrack sees the pods' flows (drains can end early when idle). */
  visible: boolean;
  /** Where the verdict came from. */
  source: 'flag' | 'probe';
  /** One sentence for answers, logs, Events and the doctor. */
  reason: string;
  /** What was found (link names, pinned BPF objects). */
  signals: string[];
}

/** What the probe read on the node. */
export interface DatapathSignals {
  /** Network interface names in the agent's (the node's) network namespace. */
  links: readonly string[];
  /** Names pinned under the BPF filesystem's tc/globals directory (Cilium and Calico pin their maps there). */
  bpfPins: readonly string[];
}

/** Interfaces Cilium creates on every node it runs. */
export const CILIUM_LINKS = ['cilium_host', 'cilium_net', 'cilium_vxlan', 'cilium_geneve'] as const;
/** Calico's eBPF data plane interfaces. */
export const CALICO_EBPF_LINKS = ['bpfin.cali', 'bpfout.cali'] as const;
/** Pinned maps of an eBPF service load balancer (Cilium's kube-proxy replacement, Calico eBPF NAT). */
export const EBPF_LB_PIN_PREFIXES = ['cilium_lb4_services', 'cilium_lb6_services', 'cali_v4_nat_fe', 'cali_v6_nat_fe'] as const;

const OVERRIDE = 'set --flow-visibility=conntrack if this node\'s pod traffic does go through netfilter conntrack';

export function judgeFlowVisibility(signals: DatapathSignals): FlowVisibility {
  const links = signals.links.filter((l) => (CILIUM_LINKS as readonly string[]).includes(l) || (CALICO_EBPF_LINKS as readonly string[]).includes(l));
  const pins = signals.bpfPins.filter((p) => EBPF_LB_PIN_PREFIXES.some((prefix) => p.startsWith(prefix)));
  const found = [...links.map((l) => `link ${l}`), ...pins.map((p) => `bpf pin tc/globals/${p}`)];
  if (pins.length > 0) {
    return { visible: false, source: 'probe', signals: found, reason: `an eBPF service load balancer runs on this node (${found.join(', ')}): service traffic is translated in eBPF and bypasses netfilter conntrack, so open flows cannot be counted and a drain lasts its maximum (${OVERRIDE})` };
  }
  if (links.length > 0) {
    return { visible: false, source: 'probe', signals: found, reason: `an eBPF datapath runs on this node (${found.join(', ')}): pod traffic may bypass netfilter conntrack, so open flows cannot be counted and a drain lasts its maximum (${OVERRIDE})` };
  }
  return { visible: true, source: 'probe', signals: [], reason: 'no eBPF datapath found (no Cilium or Calico eBPF interface, no eBPF load-balancer map pinned): pod traffic goes through netfilter conntrack' };
}

/** The verdict for a --flow-visibility mode; `auto` uses the probe's signals. */
export function resolveFlowVisibility(mode: FlowVisibilityMode, signals: DatapathSignals | undefined): FlowVisibility {
  if (mode === 'conntrack') return { visible: true, source: 'flag', signals: [], reason: 'set by --flow-visibility=conntrack: open flows are counted from netfilter conntrack' };
  if (mode === 'none') return { visible: false, source: 'flag', signals: [], reason: 'set by --flow-visibility=none: open flows cannot be seen on this node, so a drain lasts its maximum' };
  if (signals === undefined) return { visible: true, source: 'probe', signals: [], reason: 'the datapath probe could not read this node: assuming netfilter conntrack sees pod traffic' };
  return judgeFlowVisibility(signals);
}
