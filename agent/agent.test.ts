/**
 * The agent wired together, in-process: the API server stand-in (test/apiserver), the
 * in-memory conntrack and IPVS stand-ins of native/lib, the real HTTP servers, a state file.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MemoryConntrack } from 'netlink-native/memory';
import { MemoryIpvs } from 'netlink-native/memory';
import type { IpvsServiceKey } from 'netlink-native/types';
import { managedPod, markDeleting, setReady } from '../test/apiserver/pods.js';
import { AgentRig, memoryNetlinkWithEvents, until } from '../test/agent/agent-rig.js';
import { Agent } from './agent.js';

const rig = new AgentRig('cd-agent');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

const SVC: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };

function makeAgent(node: string, ct: MemoryConntrack, ipvs: MemoryIpvs): Promise<Agent> {
  return rig.makeAgent(node, memoryNetlinkWithEvents(ct, ipvs));
}

test('two nodes: both hold the draining pod at weight 0, restore what the proxy deletes, release and flush when it goes', async () => {
  const nodes = ['node-a', 'node-b'].map((name) => ({ name, ct: new MemoryConntrack(), ipvs: new MemoryIpvs() }));
  for (const n of nodes) {
    await n.ipvs.addService({ key: SVC, scheduler: 'mh' });
    await n.ipvs.addDestination(SVC, { address: '10.3.0.1', port: 8080, weight: 1 });
    await n.ipvs.addDestination(SVC, { address: '10.3.0.2', port: 8080, weight: 1 });
    await n.ct.insertConntrackForTest([
      { protocol: 'tcp', origSrc: '192.0.2.1', origDst: SVC.address, replySrc: '10.3.0.1', dstPort: 80, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', timeout: 1000 },
      { protocol: 'tcp', origSrc: '192.0.2.1', origDst: SVC.address, replySrc: '10.3.0.2', dstPort: 80, replySrcPort: 8080, srcPort: 30000, count: 2, state: 'ESTABLISHED', timeout: 1000 },
    ]);
  }
  server.putPod(managedPod({ name: 'web-1', nodeName: 'node-a', ips: ['10.3.0.1'] }));
  server.putPod(managedPod({ name: 'web-2', nodeName: 'node-b', ips: ['10.3.0.2'] }));
  const agents = await Promise.all(nodes.map((n) => makeAgent(n.name, n.ct, n.ipvs)));
  try {
    const ports = await Promise.all(agents.map((a) => a.start()));
    const readyz = async (i: number): Promise<number> => (await fetch(`http://127.0.0.1:${ports[i]!.probesPort}/readyz`)).status;
    await until('ready', async () => (await readyz(0)) === 200 && (await readyz(1)) === 200);

    server.modifyPod('shop', 'web-1', (p) => setReady(p, false));
    const weightOf = async (ipvs: MemoryIpvs, ip: string): Promise<number | undefined> => (await ipvs.listDestinations(SVC)).find((d) => d.address === ip)?.weight;
    await until('both nodes hold web-1 at 0', async () => (await weightOf(nodes[0]!.ipvs, '10.3.0.1')) === 0 && (await weightOf(nodes[1]!.ipvs, '10.3.0.1')) === 0);
    assert.equal(await weightOf(nodes[0]!.ipvs, '10.3.0.2'), 1);

    nodes[1]!.ipvs.proxyDeleteDestination(SVC, { address: '10.3.0.1', port: 8080 });
    await until('node-b restored it', async () => (await weightOf(nodes[1]!.ipvs, '10.3.0.1')) === 0);
    const metricsB = await (await fetch(`http://127.0.0.1:${ports[1]!.metricsPort}/metrics`)).text();
    assert.match(metricsB, /conndrain_ipvs_restores_total\{action="readd"\} 1/);
    assert.match(metricsB, /conndrain_ipvs_servers_held 1/);
    assert.match(metricsB, /conndrain_ipvs_available 1/);
    const holdsOnDisk = (): boolean[] => (JSON.parse(readFileSync(rig.path('node-b.json'), 'utf8')) as { holds: Array<{ recreated: boolean }> }).holds.map((h) => h.recreated);
    await until('the state file records the re-created hold', () => holdsOnDisk().length === 1 && holdsOnDisk()[0] === true);

    server.modifyPod('shop', 'web-1', (p) => markDeleting(p, 0));
    server.deletePod('shop', 'web-1');
    await until('released and flushed on both', async () => {
      const gone = await Promise.all(nodes.map(async (n) => (await weightOf(n.ipvs, '10.3.0.1')) === undefined || n.name === 'node-a'));
      const flushed = nodes.every((n) => n.ct.entries().every((e) => e.reply.src !== '10.3.0.1'));
      return gone.every(Boolean) && flushed;
    });
    assert.equal(await weightOf(nodes[0]!.ipvs, '10.3.0.1'), 0, 'node-a: not re-created by us, left as the proxy left it');
    for (const n of nodes) assert.equal(n.ct.entries().filter((e) => e.reply.src === '10.3.0.2').length, 2, `${n.name}: the other pod's entries untouched`);
    await until('events recorded', () => server.events.length >= 2);
    const reasons = server.events.map((e) => `${String((e.involvedObject as { name: string }).name)}:${String(e.reason)}:${String((e.source as { host: string }).host)}`);
    assert.ok(reasons.includes('web-1:DrainStarted:node-a'), reasons.join(' '));
    assert.ok(reasons.includes('web-1:DrainFinished:node-a'), reasons.join(' '));
    assert.ok(!reasons.some((r) => r.endsWith(':node-b')), 'only the pod\'s own node records events');
    const metricsA = await (await fetch(`http://127.0.0.1:${ports[0]!.metricsPort}/metrics`)).text();
    assert.match(metricsA, /conndrain_conntrack_entries_deleted_total\{protocol="tcp"\} 3/);
    assert.doesNotMatch(metricsA, /protocol="all"/);
    // --conntrack-events (default on): the index deleted them; the verification pass found nothing left.
    assert.match(metricsA, /conndrain_conntrack_index_verify_leftovers_total 0\n/);
    assert.doesNotMatch(metricsA, /conndrain_conntrack_index_fallbacks_total\{use="cleanup"\}/);
  } finally {
    for (const a of agents) await a.stop();
  }
});

test('IPVS absent: conntrack-only, said once, conndrain_ipvs_available 0', async () => {
  const agent = await makeAgent('node-c', new MemoryConntrack(), new MemoryIpvs({ unavailable: true }));
  try {
    const { metricsPort, probesPort } = await agent.start();
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(text, /conndrain_ipvs_available 0/);
    assert.equal((await fetch(`http://127.0.0.1:${probesPort}/healthz`)).status, 200);
  } finally {
    await agent.stop();
  }
});
