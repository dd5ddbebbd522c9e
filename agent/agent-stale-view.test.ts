/**
 * Never act on a stale view (issue 24 item 6): a deleting pod whose grace runs out while the
 * watch is stalled is decided only after a fresh list, and the IP-reuse check uses that list.
 * The scenario the fault run found: the pod is deleted and its IP given to a new pod while the
 * watch is silent; the old view still shows the old pod deleting, its grace ends, and the
 * agent must not delete the new pod's entries.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { managedPod, markDeleting } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlinkWithEvents, until } from '../test/agent/agent-rig.js';

const rig = new AgentRig('cd-stale-view');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

const IP = '10.7.0.5';

function entriesTo(ct: MemoryConntrack, ip: string): number {
  return ct.entries().filter((e) => e.reply.src === ip).length;
}

test('a grace that runs out during a stalled watch: resync first; the new pod holding the IP keeps its entries', async () => {
  const ct = new MemoryConntrack();
  server.putPod(managedPod({ name: 'old', nodeName: 'node-s', ips: [IP], uid: 'uid-old' }));
  const agent = await rig.makeAgent('node-s', memoryNetlinkWithEvents(ct, new MemoryIpvs()));
  try {
    await agent.start();
    await until('ready', () => agent.readiness().ready);
    // The old pod starts deleting with a short grace: the agent sees that much.
    server.modifyPod('shop', 'old', (p) => markDeleting(p, 4));
    await until('draining', () => agent.snapshot().pods.some((r) => r.uid === 'uid-old' && r.state === 'draining'));
    // Then the watch stalls: the deletion and the new pod with the same IP are not seen.
    server.stallWatches(true);
    server.deletePod('shop', 'old');
    server.putPod(managedPod({ name: 'new', nodeName: 'node-s', ips: [IP], uid: 'uid-new' }));
    await ct.insertConntrackForTest([{ protocol: 'tcp', origSrc: '192.0.2.9', origDst: '10.96.0.20', replySrc: IP, dstPort: 80, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', timeout: 1000 }]);
    // The old view's grace ends; the agent lists again before deciding.
    await until('old pod gone after a fresh list', () => !agent.snapshot().pods.some((r) => r.uid === 'uid-old' && r.state !== 'flushed'), 20_000);
    assert.equal(entriesTo(ct, IP), 3, 'the new pod\'s entries stay: the fresh list shows it holding the IP');
    assert.ok(agent.cache.has('uid-new'), 'the fresh list brought the new pod in although the watch is stalled');
    const metrics = await agent.metrics.registry.getSingleMetricAsString('conndrain_stale_view_deferrals_total');
    assert.match(metrics, /source="pods"\} [1-9]/);
  } finally {
    server.stallWatches(false);
    await agent.stop();
  }
});

test('while the API cannot be listed, a pod whose grace ran out stays held (no flush on the old view)', async () => {
  const ct = new MemoryConntrack();
  server.putPod(managedPod({ name: 'lone', nodeName: 'node-t', ips: ['10.7.1.5'], uid: 'uid-lone' }));
  const agent = await rig.makeAgent('node-t', memoryNetlinkWithEvents(ct, new MemoryIpvs()));
  try {
    await agent.start();
    await until('ready', () => agent.readiness().ready);
    await ct.insertConntrackForTest([{ protocol: 'udp', origSrc: '192.0.2.9', origDst: '10.96.0.21', replySrc: '10.7.1.5', dstPort: 53, replySrcPort: 53, count: 2, timeout: 100 }]);
    server.modifyPod('shop', 'lone', (p) => markDeleting(p, 3));
    await until('draining', () => agent.snapshot().pods.some((r) => r.uid === 'uid-lone' && r.state === 'draining'));
    server.stallWatches(true);
    server.failNext(1000, 500, 'list');
    await new Promise((resolve) => setTimeout(resolve, 3800));
    assert.ok(agent.snapshot().pods.some((r) => r.uid === 'uid-lone' && r.state === 'draining'), 'still draining: no decision on a view that could not be refreshed');
    assert.equal(ct.entries().length, 2, 'nothing flushed');
    server.clearFailures();
    await until('decided once the list works again', () => !agent.snapshot().pods.some((r) => r.uid === 'uid-lone' && r.state === 'draining'), 20_000);
    await until('flushed', () => ct.entries().length === 0, 10_000);
  } finally {
    server.stallWatches(false);
    server.clearFailures();
    await agent.stop();
  }
});
