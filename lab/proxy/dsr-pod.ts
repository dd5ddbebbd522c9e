import type { ScriptStep } from '../sys/script.js';

/**
 * Prepares a pod namespace for DSR the way kube-router does: an IPIP tunnel interface that
 * decapsulates what IPVS tunnels to the pod, the service VIP on it so the app accepts the
 * inner packet, and reverse-path filtering off (the inner source arrives on the tunnel).
 * Replies leave with the VIP as source, straight back to the client, bypassing IPVS.
 */
export function dsrPodSteps(netns: string, vip: string): ScriptStep[] {
  return [
    { shell: `ip -n ${netns} link show tunl0 >/dev/null 2>&1 || ip -n ${netns} tunnel add tunl0 mode ipip` },
    ['ip', '-n', netns, 'link', 'set', 'tunl0', 'up'],
    ['ip', '-n', netns, 'addr', 'add', `${vip}/32`, 'dev', 'tunl0'],
    ['ip', 'netns', 'exec', netns, 'sysctl', '-qw', ...['net.ipv4.conf.all.rp_filter', 'net.ipv4.conf.default.rp_filter', 'net.ipv4.conf.tunl0.rp_filter'].map((key) => `${key}=0`)],
  ];
}

/**
 * A node's IPVS side: the VIP on lo (IPVS only sees packets for local addresses), sloppy TCP on.
 * `scope host` keeps the kernel from choosing the VIP as the source of the node's ARP requests
 * on its pod veths (they have no address of their own): the pod owns the VIP too and would
 * ignore an ARP request "from itself", leaving the neighbour FAILED.
 */
export function ipvsNodeSteps(netns: string, vip: string, sysctls: Record<string, string>): ScriptStep[] {
  const assignments = Object.entries(sysctls).map(([key, value]) => `${key}=${value}`);
  return [['ip', '-n', netns, 'addr', 'add', `${vip}/32`, 'dev', 'lo', 'scope', 'host'], ...(assignments.length > 0 ? [['ip', 'netns', 'exec', netns, 'sysctl', '-qw', ...assignments]] : [])];
}
