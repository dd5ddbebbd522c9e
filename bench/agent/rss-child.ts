/**
 * Child of bench/agent/run.ts: one agent (in-memory netlink stand-ins, nothing touches the
 * kernel) watching the API stand-in at argv[2]; prints its RSS once the first list is synced
 * and the cache holds argv[3] pods.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { MemoryConntrack } from '../../native/lib/memory-conntrack.js';
import { MemoryIpvs } from '../../native/lib/memory-ipvs.js';
import { Agent } from '../../agent/agent.js';
import { AgentMetrics } from '../../agent/metrics.js';
import { DEFAULT_FLOW_TIMEOUTS } from '../../agent/flows.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { memoryNetlink } from './stand-ins.js';

const [kubeconfig = '', wantText = '0', stateFile = ''] = process.argv.slice(2);
const want = Number(wantText);
const config = loadAgentConfig({ flags: { nodeName: 'node-0', kubeconfig, stateFile, logLevel: 'silent' }, env: {} });
if (!config.ok) throw new Error(config.error.join('; '));
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const agent = new Agent({
  config: { ...config.value, drainPort: 0, metricsPort: 0, metricsAddress: '127.0.0.1' },
  logger: pino({ level: 'silent' }),
  netlink: memoryNetlink(new MemoryConntrack(), new MemoryIpvs({ unavailable: true })),
  kubeConfig: kc,
  flowTimeouts: DEFAULT_FLOW_TIMEOUTS,
  metrics: new AgentMetrics(),
});
await agent.start();
while (agent.cache.size < want || !agent.readiness().ready) await new Promise((r) => setTimeout(r, 100));
await new Promise((r) => setTimeout(r, 2000));
(globalThis as { gc?: () => void }).gc?.();
await new Promise((r) => setTimeout(r, 500));
const mem = process.memoryUsage();
process.stdout.write(`${JSON.stringify({ pods: agent.cache.size, rssMb: mem.rss / 2 ** 20, heapUsedMb: mem.heapUsed / 2 ** 20 })}\n`);
await agent.stop();
process.exit(0);
