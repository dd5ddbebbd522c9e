/**
 * The agent's work is proportional to what changed (issue 15 item 3): an event re-plans only
 * the pod it touches, a deleting pod goes at its grace end from a timer (no scan, no event),
 * and the state file holds only pods with something to resume, not the cluster.
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
    assert.equal(agent.plannedPods, PODS, 'the first sync plans every pod once');
    await new Promise((r) => setTimeout(r, 200)); // several hold intervals: no re-plan without a change
    assert.equal(agent.plannedPods, PODS);

    server.modifyPod('shop', 'p3', (p) => setReady(p, false));
    await until('p3 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p3' && p.state === 'draining'));
    assert.equal(agent.plannedPods, PODS + 1, 'one event, one pod re-planned');
    server.modifyPod('shop', 'p4', (p) => {
      (p.metadata as { labels: Record<string, string> }).labels.team = 'x'; // a field the plan does not read
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(agent.plannedPods, PODS + 1, 'an update of an unread field re-plans nothing');

    server.modifyPod('shop', 'p5', (p) => markDeleting(p, 2));
    await until('p5 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p5' && p.state === 'draining'));
    const planned = agent.plannedPods;
    await until('p5 gone at its grace end, with no event', () => agent.snapshot().pods.some((p) => p.key === 'shop/p5' && (p.state === 'gone' || p.state === 'flushed')), 4000);
    assert.equal(agent.plannedPods, planned + 1, 'the deadline re-plans that pod alone');
    await until('p5 flushed', () => flushed.includes('10.50.0.5'));

    server.modifyPod('shop', 'p6', (p) => markDeleting(p, 30));
    await until('p6 draining', () => agent.snapshot().pods.some((p) => p.key === 'shop/p6' && p.state === 'draining'));
    server.deletePod('shop', 'p6');
    await until('p6 flushed after DELETED', () => flushed.includes('10.50.0.6'));

    const onDiskKeys = (): string => {
      try {
        return (JSON.parse(readFileSync(stateFile, 'utf8')) as AgentState).pods.map((p) => p.key).sort().join(' ');
      } catch {
        return '';
      }
    };
    // p6 is forgotten once flushed (the API no longer has it); p5 stays, flushed, while the API still shows it.
    await until('the state file holds p3 (draining) and p5 only', () => onDiskKeys() === 'shop/p3 shop/p5');
    assert.equal(onDiskKeys(), 'shop/p3 shop/p5', `not the ${PODS} serving pods`);
  } finally {
    await agent.stop();
  }
});
