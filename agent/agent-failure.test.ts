/**
 * The agent's one error channel: a part that fails after the agent started (here the health
 * runnable's probes listener) makes the agent not ready and stops every part.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { AgentRig, memoryNetlink, until } from '../test/agent/agent-rig.js';

const rig = new AgentRig('cd-agent-failure');
before(() => rig.start());
after(() => rig.stop());

test('a part that fails after start: /readyz names it, the agent stops every part', async () => {
  const agent = await rig.makeAgent('node-f', memoryNetlink(new MemoryConntrack(), new MemoryIpvs()), { flags: { conntrackEvents: 'false', ipvsHold: 'false' } });
  const ports = await agent.start();
  await until('ready', () => agent.readiness().ready);
  // What Node does when accepting on a listening server fails.
  const probes = (agent as unknown as { health: { probes: Server } }).health.probes;
  probes.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }));
  const failure = await agent.failed;
  assert.equal(failure.runnable, 'health');
  assert.deepEqual(agent.readiness(), { ready: false, why: 'health failed: accept EMFILE' });
  await agent.stop();
  await assert.rejects(fetch(`http://127.0.0.1:${ports.drainPort}/v1/drain/x`), 'the drain API stopped too');
});
