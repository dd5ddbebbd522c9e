/**
 * How often the IPVS part reads every service. On an IPVS-mode node the table has a real server
 * per endpoint of every Service (150,000 at 150,000 pods), so each scan of it is work and
 * garbage that grow with the cluster: the full pass reads every service at least every
 * max(10 s, 10 x --hold-interval) while anything drains, and the index refresh (which keeps the
 * address index fresh while nothing drains) does not scan again in the same period.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryIpvs } from 'netlink-native/memory';
import { loadAgentConfig } from '../../src/config/agent.js';
import { FakeClock, settle } from '../../test/agent/fake-clock.js';
import { AgentMetrics } from '../runtime/metrics.js';
import type { DrainingPod } from './held-server.js';
import { IpvsRunnable } from './ipvs-runnable.js';

const SERVICES = 4;

async function rig(draining: DrainingPod[]): Promise<{ runnable: IpvsRunnable; clock: FakeClock; scans: () => number }> {
  const ipvs = new MemoryIpvs();
  for (let i = 0; i < SERVICES; i++) {
    const key = { family: 4 as const, protocol: 'tcp' as const, address: `10.96.0.${i + 1}`, port: 80 };
    await ipvs.addService({ key, scheduler: 'rr' });
    await ipvs.addDestination(key, { address: `10.52.0.${i + 1}`, port: 8080, weight: 1 });
  }
  // Reads of a service no draining pod has a server in: only a scan of every service reads it.
  let scans = 0;
  const listDestinations = ipvs.listDestinations.bind(ipvs);
  ipvs.listDestinations = (key) => {
    if (key.address === `10.96.0.${SERVICES}`) scans += 1;
    return listDestinations(key);
  };
  const config = loadAgentConfig({ flags: { nodeName: 'node-0', holdInterval: '1s' }, env: {} });
  assert.ok(config.ok);
  const clock = new FakeClock();
  const runnable = new IpvsRunnable({
    config: { ...config.value, flowPinning: false },
    ipvs,
    clock,
    logger: pino({ level: 'silent' }),
    metrics: new AgentMetrics({ defaultMetrics: false }),
    plan: { draining: () => draining, isServing: () => false },
    stopping: () => false,
    handingOverToNewer: () => false,
    flowPinningOptOuts: () => new Set(),
  });
  await runnable.start();
  await settle();
  return { runnable, clock, scans: () => scans };
}

/** `seconds` of the agent's hold interval: each second a plan run with its full pass due, as the agent's loop makes them. */
async function runFor(r: Awaited<ReturnType<typeof rig>>, draining: DrainingPod[], seconds: number): Promise<void> {
  for (let s = 0; s < seconds; s++) {
    await r.runnable.apply(draining, false, true);
    await r.runnable.idle();
    await r.clock.advance(1000);
    await settle();
  }
}

test('while a pod drains, every service is read once a period (the full pass), not again by the index refresh', async () => {
  const draining: DrainingPod[] = [{ uid: 'uid-a', key: 'shop/a', ips: ['10.52.0.1'] }];
  const r = await rig(draining);
  try {
    const before = r.scans();
    await runFor(r, draining, 60);
    const scans = r.scans() - before;
    // One full pass per 10 s period (the first run's, then every 10 s): 6-7 in 60 s. With a refresh
    // scan as well each period it was 12-13.
    assert.ok(scans >= 6 && scans <= 7, `every service was read ${String(scans)} times in 60 s`);
  } finally {
    await r.runnable.stop();
  }
});

test('while nothing drains, the index refresh still reads every service each period', async () => {
  const r = await rig([]);
  try {
    const before = r.scans();
    await runFor(r, [], 60);
    const scans = r.scans() - before;
    assert.ok(scans >= 5 && scans <= 7, `every service was read ${String(scans)} times in 60 s`);
  } finally {
    await r.runnable.stop();
  }
});
