/**
 * A watch event's hold does not wait for the interval's full IPVS pass (issue 15 item 4): the
 * full pass scans every service beside the IPVS queue, so while that scan is slow (1,000s of
 * services on a loaded node) a pod that starts draining has its known servers at weight 0 at
 * once. Before, the run loop awaited the full pass and the next event's edit queued behind
 * it: under churn, event -> weight 0 took as long as a scan, and a pod deleted within its
 * grace was often gone before it was ever held.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { loadAgentConfig } from '../src/config/agent.js';
import { FakeApiServer } from '../test/apiserver/server.js';
import { putWorkload } from '../test/apiserver/workload.js';
import { managedPod, setReady } from '../test/apiserver/pods.js';
import { memoryNetlink } from '../bench/agent/stand-ins.js';
import { Agent } from './agent.js';
import { AgentMetrics } from './runtime/metrics.js';
import { DEFAULT_FLOW_TIMEOUTS } from './drain/flows.js';
import { loadKubeConnection } from '../kube/load.js';

const server = new FakeApiServer();
let dir = '';
before(async () => {
  await server.start();
  dir = mkdtempSync(join(tmpdir(), 'cd-hold-fastpath-'));
  server.writeKubeconfig(join(dir, 'kubeconfig'));
  putWorkload(server);
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An agent on node-0 with a 50 ms hold interval over `netlink` (not started). */
async function startableAgent(netlink: ReturnType<typeof memoryNetlink>, stateFile: string): Promise<Agent> {
  const config = loadAgentConfig({ flags: { nodeName: 'node-0', kubeconfig: join(dir, 'kubeconfig'), stateFile: join(dir, stateFile), holdInterval: '50ms', logLevel: 'silent' }, env: {} });
  assert.ok(config.ok);
  return new Agent({
    config: { ...config.value, drainPort: 0, metricsPort: 0, metricsAddress: '127.0.0.1', metricsSecure: false, probesPort: 0, drainAddress: '127.0.0.1', conntrackEvents: false, flowPinning: false },
    logger: pino({ level: 'silent' }),
    netlink,
    kube: await loadKubeConnection({ kubeconfig: join(dir, 'kubeconfig') }),
    flowTimeouts: DEFAULT_FLOW_TIMEOUTS,
    metrics: new AgentMetrics({ defaultMetrics: false }),
  });
}

test('a pod that starts draining is held at once while the full pass is stuck in its scan', async () => {
  const ipvs = new MemoryIpvs();
  const key = { family: 4 as const, protocol: 'tcp' as const, address: '10.96.0.1', port: 80 };
  await ipvs.addService({ key, scheduler: 'mh' });
  for (let i = 0; i < 20; i++) {
    server.putPod(managedPod({ name: `fp${i}`, nodeName: `node-${i % 3}`, ips: [`10.51.0.${i + 1}`] }));
    await ipvs.addDestination(key, { address: `10.51.0.${i + 1}`, port: 8080, weight: 1 });
  }
  const weightOf = async (ip: string): Promise<number | undefined> => (await ipvs.listDestinations(key)).find((d) => d.address === ip)?.weight;
  const netlink = memoryNetlink(new MemoryConntrack(), ipvs);
  // A gate on the scan's dumps: closed, every listDestinations waits (a slow full pass).
  let gate: Promise<void> | undefined;
  let open = (): void => undefined;
  let stuck = 0;
  const list = netlink.listDestinations.bind(netlink);
  netlink.listDestinations = async (k) => {
    if (gate !== undefined) {
      stuck += 1;
      await gate;
    }
    return list(k);
  };
  const agent = await startableAgent(netlink, 'state.json');
  await agent.start();
  try {
    await until('ready', () => agent.readiness().ready);
    server.modifyPod('shop', 'fp1', (p) => setReady(p, false));
    await until('fp1 at weight 0', async () => (await weightOf('10.51.0.2')) === 0);
    gate = new Promise((resolve) => {
      open = resolve;
    });
    await until('a full pass stuck in its scan', () => stuck > 0);
    server.modifyPod('shop', 'fp2', (p) => setReady(p, false));
    await until('fp2 at weight 0 while the scan is stuck', async () => (await weightOf('10.51.0.3')) === 0, 3000);
    assert.ok(stuck > 0);
  } finally {
    gate = undefined;
    open();
    await agent.stop();
  }
});

test('the interval pass reads the services holding a draining pod\'s servers, not every service on the node', async () => {
  const ipvs = new MemoryIpvs();
  const held = { family: 4 as const, protocol: 'tcp' as const, address: '10.96.1.1', port: 80 };
  const others = Array.from({ length: 5 }, (_, i) => ({ family: 4 as const, protocol: 'tcp' as const, address: `10.96.1.${i + 10}`, port: 80 }));
  for (const key of [held, ...others]) await ipvs.addService({ key, scheduler: 'rr' });
  server.putPod(managedPod({ name: 'scope-a', nodeName: 'node-0', ips: ['10.52.0.1'] }));
  await ipvs.addDestination(held, { address: '10.52.0.1', port: 8080, weight: 1 });
  for (const [i, key] of others.entries()) await ipvs.addDestination(key, { address: `10.52.1.${i + 1}`, port: 8080, weight: 1 });
  const netlink = memoryNetlink(new MemoryConntrack(), ipvs);
  const dumps = new Map<string, number>();
  const list = netlink.listDestinations.bind(netlink);
  netlink.listDestinations = (k) => {
    dumps.set(String(k.address), (dumps.get(String(k.address)) ?? 0) + 1);
    return list(k);
  };
  const agent = await startableAgent(netlink, 'state-scope.json');
  await agent.start();
  try {
    await until('ready', () => agent.readiness().ready);
    server.modifyPod('shop', 'scope-a', (p) => setReady(p, false));
    await until('scope-a at weight 0', async () => (await list(held)).find((d) => d.address === '10.52.0.1')?.weight === 0);
    const before = { held: dumps.get('10.96.1.1') ?? 0, other: dumps.get('10.96.1.10') ?? 0 };
    await until('ten interval passes over the held service', () => (dumps.get('10.96.1.1') ?? 0) >= before.held + 10, 10_000);
    const other = (dumps.get('10.96.1.10') ?? 0) - before.other;
    // Every service is read again only by the index refresh and the full pass every 10 s (max(10 s, 10 x the interval)).
    assert.ok(other <= 2, `a service with no draining pod's server was read ${String(other)} times in ten passes`);
  } finally {
    await agent.stop();
  }
});
