import { runIn } from '../sys/exec.js';

/**
 * Where does one TCP flow's traffic go? Named nft counters in a namespace (a node, the client,
 * a pod), for diagnostics of the DSR scenarios: packets of the flow from the client (`fromClient`),
 * replies to the client (`toClient`), IPIP packets the namespace sends (`tunnelOut`).
 */
const TABLE = 'lab-flow';
const NAMES = ['fromClient', 'toClient', 'tunnelOut'] as const;
export type FlowCounters = Record<(typeof NAMES)[number], number>;

export async function installFlowCounters(netns: string, client: string, clientPort: number): Promise<void> {
  const text = [
    `table ip ${TABLE}`, `delete table ip ${TABLE}`, `table ip ${TABLE} {`,
    ...NAMES.map((name) => `  counter ${name} { }`),
    '  chain pre { type filter hook prerouting priority -300; policy accept;',
    `    ip saddr ${client} tcp sport ${clientPort} counter name "fromClient"`,
    `    ip daddr ${client} tcp dport ${clientPort} counter name "toClient"`,
    '  }',
    '  chain out { type filter hook output priority -300; policy accept;',
    '    ip protocol 4 counter name "tunnelOut"',
    `    ip daddr ${client} tcp dport ${clientPort} counter name "toClient"`,
    '  }',
    '}',
  ].join('\n');
  await runIn(netns, 'nft', ['-f', '-'], `${text}\n`);
}

export async function readFlowCounters(netns: string): Promise<FlowCounters> {
  const json = JSON.parse(await runIn(netns, 'nft', ['-j', 'list', 'counters', 'table', 'ip', TABLE])) as { nftables: { counter?: { name: string; packets: number } }[] };
  const counters: FlowCounters = { fromClient: 0, toClient: 0, tunnelOut: 0 };
  for (const item of json.nftables) if (item.counter !== undefined && (NAMES as readonly string[]).includes(item.counter.name)) counters[item.counter.name as keyof FlowCounters] = item.counter.packets;
  return counters;
}
