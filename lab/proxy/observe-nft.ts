import { runIn } from '../sys/exec.js';

/**
 * Counts, on a node, the packets still sent towards given pod IPs after NAT (a filter hook
 * at prerouting priority 10, after kube-proxy's dstnat at -100): the direct measure of
 * "packets keep going to the dead IP". Named counters, read as nftables JSON.
 */
export const OBSERVE_TABLE = 'lab-observe';

function counterName(ip: string): string {
  return `to-${ip.replace(/\./g, '-')}`;
}

export async function installObserver(netns: string, ips: readonly string[]): Promise<void> {
  const lines = [`table ip ${OBSERVE_TABLE}`, `delete table ip ${OBSERVE_TABLE}`, `table ip ${OBSERVE_TABLE} {`];
  for (const ip of ips) lines.push(`  counter ${counterName(ip)} { }`);
  lines.push('  chain prerouting { type filter hook prerouting priority 10; policy accept;');
  for (const ip of ips) lines.push(`    ip daddr ${ip} counter name "${counterName(ip)}"`);
  lines.push('  }', '}');
  await runIn(netns, 'nft', ['-f', '-'], `${lines.join('\n')}\n`);
}

interface NftCounterJson {
  nftables: { counter?: { name: string; packets: number; bytes: number } }[];
}

/** Packets counted towards each IP since the observer was installed. */
export async function readObserver(netns: string, ips: readonly string[]): Promise<Map<string, number>> {
  const json = JSON.parse(await runIn(netns, 'nft', ['-j', 'list', 'counters', 'table', 'ip', OBSERVE_TABLE])) as NftCounterJson;
  const byName = new Map<string, number>();
  for (const item of json.nftables) if (item.counter !== undefined) byName.set(item.counter.name, item.counter.packets);
  return new Map(ips.map((ip) => [ip, byName.get(counterName(ip)) ?? 0]));
}
