import { run } from '../sys/exec.js';

/**
 * Prepares a pod namespace for DSR the way kube-router does: an IPIP tunnel interface that
 * decapsulates what IPVS tunnels to the pod, the service VIP on it so the app accepts the
 * inner packet, and reverse-path filtering off (the inner source arrives on the tunnel).
 * Replies leave with the VIP as source, straight back to the client, bypassing IPVS.
 */
export async function prepareDsrPod(netns: string, vip: string): Promise<void> {
  const exists = await run('ip', ['-n', netns, 'link', 'show', 'tunl0']).then(() => true, () => false);
  if (!exists) await run('ip', ['-n', netns, 'tunnel', 'add', 'tunl0', 'mode', 'ipip']);
  await run('ip', ['-n', netns, 'link', 'set', 'tunl0', 'up']);
  await run('ip', ['-n', netns, 'addr', 'add', `${vip}/32`, 'dev', 'tunl0']);
  for (const key of ['net.ipv4.conf.all.rp_filter', 'net.ipv4.conf.default.rp_filter', 'net.ipv4.conf.tunl0.rp_filter']) {
    await run('ip', ['netns', 'exec', netns, 'sysctl', '-qw', `${key}=0`]);
  }
}

/** A node's IPVS side: the VIP on lo (IPVS only sees packets for local addresses), sloppy TCP on. */
export async function prepareIpvsNode(netns: string, vip: string, sysctls: Record<string, string>): Promise<void> {
  await run('ip', ['-n', netns, 'addr', 'add', `${vip}/32`, 'dev', 'lo']);
  for (const [key, value] of Object.entries(sysctls)) await run('ip', ['netns', 'exec', netns, 'sysctl', '-qw', `${key}=${value}`]);
}
