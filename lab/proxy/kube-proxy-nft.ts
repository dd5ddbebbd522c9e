import { runIn } from '../sys/exec.js';
import type { ServiceState } from './service.js';

/**
 * A stand-in for kube-proxy in nftables mode: table `ip kube-proxy`, a `services` verdict map
 * keyed by address . protocol . port, one chain per service port that picks an endpoint
 * with `numgen random mod N`, and one DNAT chain per endpoint. Each sync replaces the table
 * in one transaction, as kube-proxy's full syncs do. Only new connections are balanced:
 * an existing conntrack entry keeps its DNAT whatever the rules say (the ghost).
 */
export const KUBE_PROXY_TABLE = 'kube-proxy';

function chainId(text: string): string {
  return text.replace(/[^a-zA-Z0-9]/g, '-');
}

export function renderKubeProxyRules(services: readonly ServiceState[]): string {
  const lines = [
    `table ip ${KUBE_PROXY_TABLE}`,
    `delete table ip ${KUBE_PROXY_TABLE}`,
    `table ip ${KUBE_PROXY_TABLE} {`,
    '  map service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }',
    '  chain nat-prerouting { type nat hook prerouting priority dstnat; policy accept; jump services; }',
    '  chain nat-output { type nat hook output priority -100; policy accept; jump services; }',
    '  chain services { ip daddr . meta l4proto . th dport vmap @service-ips; }',
  ];
  const elements: string[] = [];
  for (const service of services) {
    for (const port of service.ports) {
      const svcChain = `svc-${chainId(service.name)}-${port.protocol}-${port.port}`;
      const endpoints = service.endpoints.map((endpoint) => ({ ...endpoint, chain: `sep-${chainId(endpoint.pod)}-${port.protocol}-${port.targetPort}` }));
      for (const endpoint of endpoints) {
        lines.push(`  chain ${endpoint.chain} { meta l4proto ${port.protocol} dnat to ${endpoint.ip}:${port.targetPort}; }`);
      }
      if (endpoints.length === 0) continue; // kube-proxy rejects in its filter table; here the packet goes unrouted
      const vmap = endpoints.map((endpoint, index) => `${index} : goto ${endpoint.chain}`).join(', ');
      lines.push(`  chain ${svcChain} { numgen random mod ${endpoints.length} vmap { ${vmap} }; }`);
      elements.push(`${service.address} . ${port.protocol} . ${port.port} : goto ${svcChain}`);
    }
  }
  lines.push('}');
  if (elements.length > 0) lines.push(`add element ip ${KUBE_PROXY_TABLE} service-ips { ${elements.join(', ')} }`);
  return `${lines.join('\n')}\n`;
}

/** Programs one node's rules (one `nft -f` transaction). */
export async function syncKubeProxy(netns: string, services: readonly ServiceState[]): Promise<void> {
  await runIn(netns, 'nft', ['-f', '-'], renderKubeProxyRules(services));
}
