/**
 * The API stand-in's byte counters as bench lines: by resource, then by client (the agent
 * sends no User-Agent: `-`; the kube-proxy stand-in's is `kube-proxy`).
 */
import type { ByteCounts, ByteStatsSnapshot } from '../../test/apiserver/byte-stats.js';

const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
const pair = (c: ByteCounts): string => `${mb(c.list)} + ${mb(c.watch)} (${c.lists} lists, ${c.watches} watches)`;

export function formatBytesSent(stats: ByteStatsSnapshot): string[] {
  const lines = Object.entries(stats.byResource)
    .filter(([, c]) => c.lists + c.watches > 0)
    .map(([resource, c]) => `${resource.padEnd(16)} ${pair(c)}`);
  for (const [client, resources] of Object.entries(stats.byClient)) {
    const name = client === '-' ? 'agent (no User-Agent)' : client;
    const total = Object.values(resources).reduce((sum, c) => sum + c.list + c.watch, 0);
    const parts = Object.entries(resources).map(([resource, c]) => `${resource} ${pair(c)}`);
    lines.push(`${name}: ${mb(total)} MB (${parts.join('; ')})`);
  }
  lines.push(`total ${mb(stats.total)} MB`);
  return lines;
}
