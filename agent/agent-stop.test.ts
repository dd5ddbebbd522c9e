/**
 * A stopped agent leaves nothing behind: every timer it armed (hold interval, deadlines,
 * decisions by time after a resync, retries) is cancelled, so the process can exit.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { systemClock, type Clock, type TimerHandle } from '../time/clock.js';
import { managedPod, markDeleting, setReady } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlinkWithEvents, until } from '../test/agent/agent-rig.js';

const rig = new AgentRig('cd-agent-stop');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

/** The system clock, counting the timers armed and not yet fired or cancelled. */
function countingClock(): Clock & { live(): string[] } {
  const live = new Map<object, string>();
  const track = (kind: string, ms: number, make: (done: () => void) => TimerHandle): TimerHandle => {
    const key = {};
    live.set(key, `${kind} ${ms} ms`);
    const handle = make(() => live.delete(key));
    return { cancel: () => { live.delete(key); handle.cancel(); } };
  };
  return {
    now: () => systemClock.now(),
    setTimeout: (fn, ms) => track('timeout', ms, (done) => systemClock.setTimeout(() => { done(); fn(); }, ms)),
    setInterval: (fn, ms) => track('interval', ms, () => systemClock.setInterval(fn, ms)),
    live: () => [...live.values()],
  };
}

test('after stop, no timer of the agent is left (pods and endpoints draining, a terminating endpoint, a resync done)', async () => {
  const clock = countingClock();
  server.putPod(managedPod({ name: 'l1', nodeName: 'node-q', ips: ['10.63.0.1'], uid: 'uid-l1' }));
  server.putPod(managedPod({ name: 'r1', nodeName: 'node-r', ips: ['10.63.0.2'], uid: 'uid-r1' }));
  server.putPod(managedPod({ name: 'r2', nodeName: 'node-r', ips: ['10.63.0.3'], uid: 'uid-r2' }));
  const agent = await rig.makeAgent('node-q', memoryNetlinkWithEvents(new MemoryConntrack(), new MemoryIpvs()), { deps: { clock }, flags: { endpointDebounce: '100ms', viewFresh: '0s' } });
  await agent.start();
  await until('ready', () => agent.readiness().ready);
  server.modifyPod('shop', 'l1', (p) => markDeleting(p, 600));
  server.modifyPod('shop', 'r1', (p) => markDeleting(p, 600)); // terminating: a deadline an hour away
  server.modifyPod('shop', 'r2', (p) => setReady(p, false));
  await until('draining', () => agent.snapshot().pods.filter((p) => p.state === 'draining').length === 3);
  server.deletePod('shop', 'r2'); // gone after the debounce, decided after a resync (--view-fresh 0s)
  await until('r2 forgotten', () => !agent.snapshot().pods.some((p) => p.uid === 'uid-r2'));
  await agent.stop();
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(clock.live(), []);
});
