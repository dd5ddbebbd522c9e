/**
 * The cluster-wide IPVS hold on a real kernel. Runs INSIDE the QEMU guest (test/vm), started
 * by agent-ipvs.vm.test.ts. Two "node" namespaces, each with the same `mh` IPVS service and
 * its own agent PROCESS (the real CLI), both watching the API server stand-in (test/apiserver,
 * served on a unix socket and relayed into each namespace). Only node-a carries traffic to
 * the pod (a conntrack entry there); the pod drains; both nodes hold its real server at
 * weight 0; a proxy stand-in (this test, through netlink) deletes the server on node-b and the
 * agent there restores it (re-add at the original weight, then 0); the pod goes and both
 * release: node-b removes what it re-created, node-a leaves the proxy's server alone.
 * Not a *.test.ts file: the host kernel has no IPVS.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import type { IpvsServiceKey } from 'netlink-native/types';
import { FakeApiServer } from '../apiserver/server.js';
import { putWorkload } from '../apiserver/workload.js';
import { managedPod, markDeleting, setReady } from '../apiserver/pods.js';
import { addNetns, AgentProcess, API_PORT_IN_NODE, deleteNetns, DRAIN_PORT, getUnix, METRICS_PORT, PROBES_PORT, startRelay, until } from './node-netns.js';
import { insertConntrackForTest } from 'netlink-native/testing';

if (!existsSync('/proc/net/ip_vs')) throw new Error('agent-ipvs.guest.ts runs inside the IPVS test VM; use test/agent/agent-ipvs.vm.test.ts');

const SVC: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };
const POD_IP = '10.30.0.1';
const OTHER_IP = '10.30.0.2';
const NODES = ['node-a', 'node-b'] as const;
const api = new FakeApiServer();
const dir = mkdtempSync(join(tmpdir(), 'cdag-vm-'));
const relays: ChildProcess[] = [];
const agents = new Map<string, AgentProcess>();
const netlinks = new Map<string, NativeNetlink>();
const ns = (node: string): string => `cdagvm-${node}`;

before(async () => {
  await api.start();
  await api.listenUnix(join(dir, 'api.sock'));
  api.writeKubeconfig(join(dir, 'kubeconfig'), `http://127.0.0.1:${API_PORT_IN_NODE}`);
  putWorkload(api); // the opted-in namespace and Service: agents learn other nodes' pods from its EndpointSlices
  api.putPod(managedPod({ name: 'web-1', nodeName: 'node-a', ips: [POD_IP] }));
  api.putPod(managedPod({ name: 'web-2', nodeName: 'node-b', ips: [OTHER_IP] }));
  for (const node of NODES) {
    addNetns(ns(node));
    const netlink = openNetlink({ netns: ns(node) });
    netlinks.set(node, netlink);
    await netlink.addService({ key: SVC, scheduler: 'mh' });
    for (const address of [POD_IP, OTHER_IP]) await netlink.addDestination(SVC, { address, port: 8080, weight: 1, forwarding: 'masq' });
    relays.push(await startRelay(ns(node), `tcp:127.0.0.1:${API_PORT_IN_NODE}`, `unix:${join(dir, 'api.sock')}`));
    relays.push(await startRelay(ns(node), `unix:${join(dir, `${node}-metrics.sock`)}`, `tcp:127.0.0.1:${METRICS_PORT}`));
    relays.push(await startRelay(ns(node), `unix:${join(dir, `${node}-probes.sock`)}`, `tcp:127.0.0.1:${PROBES_PORT}`));
  }
  // Only node-a carries the client's flow to the pod.
  await insertConntrackForTest(netlinks.get('node-a')!, [{ protocol: 'tcp', origSrc: '192.0.2.1', origDst: SVC.address, replySrc: POD_IP, dstPort: 80, replySrcPort: 8080, state: 'ESTABLISHED', timeout: 3600 }]);
  for (const node of NODES) {
    agents.set(node, AgentProcess.start(ns(node), [
      '--node-name', node, '--kubeconfig', join(dir, 'kubeconfig'), '--state-file', join(dir, `${node}-state.json`),
      '--drain-port', String(DRAIN_PORT), '--metrics-port', String(METRICS_PORT), '--metrics-address', '127.0.0.1', '--metrics-secure=false',
      '--hold-interval', '500ms', '--gone-slack', '0s',
    ]));
  }
});

after(async () => {
  for (const a of agents.values()) a.kill('SIGKILL');
  await Promise.all([...agents.values()].map((a) => a.exited));
  for (const r of relays) r.kill('SIGTERM');
  for (const n of netlinks.values()) n.close();
  await api.close();
  for (const node of NODES) deleteNetns(ns(node));
  rmSync(dir, { recursive: true, force: true });
});

async function weight(node: string, ip: string): Promise<number | undefined> {
  return (await netlinks.get(node)!.listDestinations(SVC)).find((d) => d.address === ip)?.weight;
}

async function metrics(node: string): Promise<string> {
  return (await getUnix(join(dir, `${node}-metrics.sock`), '/metrics')).body;
}

test('two nodes hold a draining pod at weight 0, restore what the proxy deletes, release when it goes', { timeout: 540_000 }, async () => {
  for (const node of NODES) {
    const agent = agents.get(node)!;
    try {
      await until(`${node} ready`, async () => {
        try {
          return (await getUnix(join(dir, `${node}-probes.sock`), '/readyz')).status === 200;
        } catch {
          return false;
        }
      }, 420_000);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- ${node} stdout ---\n${agent.lines.slice(-20).map((l) => JSON.stringify(l)).join('\n')}\n--- stderr ---\n${agent.stderr.slice(-20).join('\n')}`);
    }
    assert.match(await metrics(node), /conndrain_ipvs_available 1/);
  }

  api.modifyPod('shop', 'web-1', (p) => setReady(p, false));
  await until('both nodes hold web-1 at weight 0', async () => (await weight('node-a', POD_IP)) === 0 && (await weight('node-b', POD_IP)) === 0, 60_000);
  for (const node of NODES) assert.equal(await weight(node, OTHER_IP), 1, `${node}: the other pod untouched`);

  // The proxy stand-in on node-b deletes the server (as a node without connections would).
  await netlinks.get('node-b')!.deleteDestination(SVC, { address: POD_IP, port: 8080 });
  await until('node-b restored the server', async () => (await weight('node-b', POD_IP)) === 0, 30_000);
  await agents.get('node-b')!.waitFor('re-add logged', (l) => /re-added at its original weight/.test(l.msg ?? ''), 30_000);
  assert.match(await metrics('node-b'), /conndrain_ipvs_restores_total\{action="readd"\} 1/);
  // And resets its weight: re-asserted.
  await netlinks.get('node-b')!.setDestinationWeight(SVC, { address: POD_IP, port: 8080 }, 1);
  await until('node-b re-asserted weight 0', async () => (await weight('node-b', POD_IP)) === 0, 30_000);
  assert.match(await metrics('node-b'), /conndrain_ipvs_restores_total\{action="weight"\} 1/);

  // The pod goes: both release.
  api.modifyPod('shop', 'web-1', (p) => markDeleting(p, 30));
  api.deletePod('shop', 'web-1');
  await until('node-b removed what it re-created', async () => (await weight('node-b', POD_IP)) === undefined, 30_000);
  await until('both hold nothing', async () => (await Promise.all(NODES.map(metrics))).every((m) => /conndrain_ipvs_servers_held 0/.test(m)), 30_000);
  assert.equal(await weight('node-a', POD_IP), 0, 'node-a: not re-created by the agent, left as the proxy left it');
  // No more interference: the proxy's changes stay.
  await netlinks.get('node-a')!.deleteDestination(SVC, { address: POD_IP, port: 8080 });
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await weight('node-a', POD_IP), undefined, 'released: the agent no longer restores it');
  for (const node of NODES) assert.equal(await weight(node, OTHER_IP), 1);
});
