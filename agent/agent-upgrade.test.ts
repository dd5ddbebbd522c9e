/**
 * Upgrade (issue 24 item 9): a state file written by the previous agent, which planned every
 * managed pod of the cluster, holds records and IPVS holds of other nodes' pods. The new agent
 * resumes those holds as they were (weight 0, never released while the slices are not listed
 * yet), then lets the EndpointSlices decide: still draining, held; Ready again, the original
 * weight back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import type { IpvsServiceKey } from 'netlink-native/types';
import { managedPod, setReady } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlinkWithEvents, until } from '../test/agent/agent-rig.js';

const rig = new AgentRig('cd-agent-upgrade');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

const SVC: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };
const IP = '10.62.0.1';

test('the previous agent\'s holds of other nodes\' pods are kept through the start-up and then follow the slices', async () => {
  server.putPod(managedPod({ name: 'r1', nodeName: 'node-b', ips: [IP], uid: 'uid-r1', ready: false }));
  const ipvs = new MemoryIpvs();
  await ipvs.addService({ key: SVC, scheduler: 'mh' });
  await ipvs.addDestination(SVC, { address: IP, port: 8080, weight: 0 }); // the old agent held it
  const stateFile = rig.path('upgrade.json');
  writeFileSync(stateFile, JSON.stringify({
    version: 2,
    writtenAt: new Date().toISOString(),
    pods: [{ uid: 'uid-r1', key: 'shop/r1', nodeName: 'node-b', ips: [IP], state: 'draining', sinceMs: Date.now() - 5000, wasReady: true, reason: 'not-ready' }],
    holds: [{ podUid: 'uid-r1', podKey: 'shop/r1', service: SVC, scheduler: 'mh', destination: { address: IP, port: 8080, family: 4 }, spec: { address: IP, port: 8080, family: 4, forwarding: 'masq', weight: 5 }, originalWeight: 5, recreated: false }],
    sessions: [],
  }));
  const weights: Array<number | undefined> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      weights.push((await ipvs.listDestinations(SVC)).find((d) => d.address === IP)?.weight);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  server.failNext(6, 500, 'list'); // the first lists fail: the resumed hold must not be released meanwhile
  const agent = await rig.makeAgent('node-a', memoryNetlinkWithEvents(new MemoryConntrack(), ipvs), { stateFile });
  try {
    await agent.start();
    await until('ready', () => agent.readiness().ready, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(weights.every((w) => w === 0), `held at 0 all along: ${[...new Set(weights)].join(',')}`);
    assert.ok(agent.snapshot().pods.some((p) => p.uid === 'uid-r1' && p.state === 'draining'), 'still a draining endpoint');
    server.modifyPod('shop', 'r1', (p) => setReady(p, true));
    await until('the original weight back', async () => (await ipvs.listDestinations(SVC)).find((d) => d.address === IP)?.weight === 5);
  } finally {
    sampling = false;
    await sampler;
    await agent.stop();
  }
});
