/**
 * The agent wired together (API server stand-in, in-memory conntrack and IPVS, real HTTP
 * servers): a preStop call that reaches a starting agent is held, not refused; a call for a
 * pod just DELETED is answered pod-gone; on a node with an eBPF datapath a drain lasts its
 * maximum and its answer and Events say why.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { managedPod, markDeleting } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlink } from '../test/agent/agent-rig.js';
import { Agent } from './agent.js';
import type { DatapathProbeOptions } from './drain/flow-visibility-probe.js';

const rig = new AgentRig('cd-agent-start');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

function makeAgent(node: string, flags: Record<string, string> = {}, datapathProbe?: DatapathProbeOptions): Promise<Agent> {
  return rig.makeAgent(node, memoryNetlink(new MemoryConntrack(), new MemoryIpvs()), {
    flags: { flowPollInterval: '50ms', ...flags },
    deps: { datapathProbe: datapathProbe ?? { listLinks: () => Promise.resolve(['lo', 'eth0']), listBpfPins: () => Promise.resolve([]) } },
  });
}

async function drainCall(port: number, id: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/v1/drain/${id}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, ms: Date.now() - started };
}

test('start-up: a preStop call before the first pod list is held, then drained (not 404); an unknown id gets 404 after the sync', async () => {
  const pod = managedPod({ name: 'early', nodeName: 'node-s', ips: ['10.5.0.1'], drain: '30s', minDrain: '1s', uid: 'uid-early' });
  markDeleting(pod, 60);
  server.putPod(pod);
  // The first lists fail (pods, EndpointSlices and Namespaces share them, about three each): the first
  // complete pod list is in after the watch's backoff (at least 750 ms).
  server.failNext(9, 500, 'list');
  const agent = await makeAgent('node-s');
  try {
    const { drainPort } = await agent.start();
    assert.equal(agent.readiness().ready, false, 'not ready before the first pod list');
    const [known, unknown] = await Promise.all([drainCall(drainPort, 'drain-early'), drainCall(drainPort, 'drain-nobody')]);
    assert.equal(known.status, 200, JSON.stringify(known.body));
    assert.equal(known.body.ended, 'idle');
    assert.equal(known.body.pod, 'shop/early');
    assert.equal(unknown.status, 404);
    assert.ok(unknown.ms >= 500, `404 only after the first pod list (${unknown.ms} ms)`);
  } finally {
    await agent.stop();
  }
});

test('a call for a pod DELETED shortly before is answered pod-gone, not 404', async () => {
  const pod = managedPod({ name: 'brief', nodeName: 'node-g', ips: ['10.5.0.2'], drain: '30s', uid: 'uid-brief' });
  server.putPod(pod);
  const agent = await makeAgent('node-g');
  try {
    const { drainPort } = await agent.start();
    const deadline = Date.now() + 5000;
    while (!agent.readiness().ready || agent.cache.get('uid-brief') === undefined) {
      assert.ok(Date.now() < deadline, 'agent synced');
      await new Promise((r) => setTimeout(r, 10));
    }
    server.deletePod('shop', 'brief');
    while (agent.cache.get('uid-brief') !== undefined) {
      assert.ok(Date.now() < deadline, 'DELETED seen');
      await new Promise((r) => setTimeout(r, 10));
    }
    const { status, body } = await drainCall(drainPort, 'drain-brief');
    assert.equal(status, 200);
    assert.equal(body.ended, 'pod-gone');
    assert.equal(body.pod, 'shop/brief');
  } finally {
    await agent.stop();
  }
});

test('eBPF datapath (Cilium links): the drain lasts its maximum; answer and Events say why', async () => {
  const pod = managedPod({ name: 'blind', nodeName: 'node-e', ips: ['10.5.0.3'], drain: '2s', minDrain: '0s', uid: 'uid-blind' });
  markDeleting(pod, 60);
  server.putPod(pod);
  const agent = await makeAgent('node-e', {}, { listLinks: () => Promise.resolve(['lo', 'eth0', 'cilium_host', 'cilium_net']), listBpfPins: () => Promise.resolve(['cilium_lb4_services_v2', 'cilium_ct4_global']) });
  try {
    const { drainPort, metricsPort } = await agent.start();
    const { status, body, ms } = await drainCall(drainPort, 'drain-blind');
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(metrics, /conndrain_flows_visible 0\n/);
    assert.match(metrics, /conndrain_drain_api_answers_total\{code="200"\} 1\n/);
    assert.equal(status, 200);
    assert.equal(body.ended, 'timeout');
    assert.equal(body.drainMs, 2000);
    assert.ok(Number(body.elapsedMs) >= 2000 && ms >= 1900, `lasted its maximum (${ms} ms) although conntrack shows no flow`);
    assert.equal(body.checks, 0);
    assert.match(String(body.flowsUnknown), /cilium_lb4_services_v2/);
    const deadline = Date.now() + 3000;
    while (!server.events.some((e) => (e.involvedObject as { name: string }).name === 'blind' && e.reason === 'DrainFinished')) {
      assert.ok(Date.now() < deadline, 'DrainFinished posted');
      await new Promise((r) => setTimeout(r, 10));
    }
    const mine = server.events.filter((e) => (e.involvedObject as { name: string }).name === 'blind').map((e) => `${String(e.reason)}: ${String(e.message)}`);
    assert.ok(mine.some((m) => m.startsWith('DrainStarted') && m.includes('lasts its maximum') && m.includes('cilium')), mine.join('\n'));
    assert.ok(mine.some((m) => m.startsWith('DrainFinished') && m.includes('ended: timeout') && m.includes('open flows unknown') && m.includes('cilium')), mine.join('\n'));
  } finally {
    await agent.stop();
  }
});

test('--flow-visibility=conntrack overrides the probe: the same node ends the drain when idle', async () => {
  const pod = managedPod({ name: 'seen', nodeName: 'node-f', ips: ['10.5.0.4'], drain: '20s', minDrain: '0s', uid: 'uid-seen' });
  markDeleting(pod, 60);
  server.putPod(pod);
  const agent = await makeAgent('node-f', { flowVisibility: 'conntrack' }, { listLinks: () => Promise.resolve(['cilium_host']), listBpfPins: () => Promise.resolve(['cilium_lb4_services_v2']) });
  try {
    const { drainPort } = await agent.start();
    const { status, body } = await drainCall(drainPort, 'drain-seen');
    assert.equal(status, 200);
    assert.equal(body.ended, 'idle');
    assert.equal('flowsUnknown' in body, false);
  } finally {
    await agent.stop();
  }
});
