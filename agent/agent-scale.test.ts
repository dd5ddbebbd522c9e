/**
 * The agent's work is proportional to what changed (issue 15 item 3, issue 24 item 7): it
 * plans only its own node's pods (the rest of the cluster comes from EndpointSlices), an event
 * re-plans only the pod it touches, a deleting pod goes at its grace end from a timer (no scan,
 * no event), and the state file holds only what has something to resume, not the cluster.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { managedPod, markDeleting, setReady } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlink, until } from '../test/agent/agent-rig.js';
import type { AgentState } from './runtime/state-file.js';

const rig = new AgentRig('cd-agent-scale');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

test('an event re-plans only its pod; grace ends by timer; the state file holds only what must resume', async () => {
  const PODS = 500;
  for (let i = 0; i < PODS; i++) server.putPod(managedPod({ name: `p${i}`, nodeName: `node-${i % 7}`, ips: [`10.50.${i >> 8}.${i & 255}`] }));
  const stateFile = rig.path('state.json');
  const netlink = memoryNetlink(new MemoryConntrack(), new MemoryIpvs());
  const flushed: string[] = [];
  const deleteConntrack = netlink.deleteConntrack.bind(netlink);
  netlink.deleteConntrack = (o) => {
    flushed.push(...o.addresses);
    return deleteConntrack(o);
  };
  const agent = await rig.makeAgent('node-0', netlink, { stateFile, config: { ipvsHold: false, conntrackEvents: false } });
  await agent.start();
  try {
    await until('ready', () => agent.readiness().ready);
    const LOCAL = Math.ceil(PODS / 7);
    assert.equal(agent.plannedPods, LOCAL, 'the first sync plans every pod of this node once, and no other');
    await new Promise((r) => setTimeout(r, 200)); // several hold intervals: no re-plan without a change
    assert.equal(agent.plannedPods, LOCAL);

    server.modifyPod('shop', 'p7', (p) => setReady(p, false));
    await until('p7 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p7' && p.state === 'draining'));
    assert.equal(agent.plannedPods, LOCAL + 1, 'one event, one pod re-planned');
    server.modifyPod('shop', 'p14', (p) => {
      (p.metadata as { labels: Record<string, string> }).labels.team = 'x'; // a field the plan does not read
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(agent.plannedPods, LOCAL + 1, 'an update of an unread field re-plans nothing');
    // Another node's pod: its drain comes from its EndpointSlice, not from a pod watch.
    const drainingEndpoints = async (): Promise<number> => (await agent.metrics.endpointsDraining.get()).values[0]?.value ?? 0;
    const draining = await drainingEndpoints();
    server.modifyPod('shop', 'p3', (p) => setReady(p, false));
    await until('p3 draining (from its slice)', async () => (await drainingEndpoints()) === draining + 1);
    assert.equal(agent.plannedPods, LOCAL + 1, 'no pod plan for another node\'s pod');

    server.modifyPod('shop', 'p21', (p) => markDeleting(p, 2));
    await until('p21 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p21' && p.state === 'draining'));
    const planned = agent.plannedPods;
    await until('p21 gone at its grace end, with no event', () => agent.snapshot().pods.some((p) => p.key === 'shop/p21' && (p.state === 'gone' || p.state === 'flushed')), 4000);
    assert.equal(agent.plannedPods, planned + 1, 'the deadline re-plans that pod alone');
    await until('p21 flushed', () => flushed.includes('10.50.0.21'));

    server.modifyPod('shop', 'p28', (p) => markDeleting(p, 30));
    await until('p28 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p28' && p.state === 'draining'));
    server.deletePod('shop', 'p28');
    await until('p28 flushed after DELETED', () => flushed.includes('10.50.0.28'));

    const onDiskKeys = (): string => {
      try {
        return (JSON.parse(readFileSync(stateFile, 'utf8')) as AgentState).pods.map((p) => p.key).sort().join(' ');
      } catch {
        return '';
      }
    };
    // p28 is forgotten once flushed (the API no longer has it); p21 stays, flushed, while the API
    // still shows it. p3 drains on another node: with the IPVS hold off nothing of it is kept
    // (agent-endpoints.test.ts, "a conntrack-only node keeps no other node's endpoint").
    await until('the state file holds p7 (draining) and p21 only', () => onDiskKeys() === 'shop/p21 shop/p7');
    assert.equal(onDiskKeys(), 'shop/p21 shop/p7', `not the ${PODS} serving pods`);
  } finally {
    await agent.stop();
  }
});
