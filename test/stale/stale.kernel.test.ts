/**
 * `conndrain conntrack stale` against the real kernel's conntrack: a node namespace DNATs
 * service addresses (nftables, as kube-proxy) to pod addresses; the flows' entries are
 * classified against EndpointSlices and Pods served by the API stand-in (test/apiserver:
 * paginated EndpointSliceList, `status.podIP` / `spec.nodeName` field selectors) through
 * `--kubeconfig`, and once from an offline file (`--endpoints`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeApiServer } from '../apiserver/server.js';
import { DnatNode, type DnatRule } from './dnat-node.js';
import { podObject, sliceObject, writeInventory } from './inventory-file.js';

const node = new DnatNode(`janitor-s${process.pid}-`, 245);
const dir = mkdtempSync(join(tmpdir(), 'janitor-s-'));
const endpoints = join(dir, 'endpoints.json');
const kubeconfig = join(dir, 'kubeconfig');
const api = new FakeApiServer();

const OWNED = '10.245.0.5'; // ready endpoint of kube-dns
const TERMINATING = '10.245.0.6'; // terminating (not ready, not serving) endpoint of kube-dns
const NEVER = '10.245.0.7'; // no endpoint, no pod: the ghost
const REUSED_POD = '10.245.0.8'; // IP now held by a live pod of this node (hostPort), no endpoint
const REUSED_OTHER_PORT = '10.245.0.9'; // IP reused by an endpoint of another service on 8080
const NEVER_TCP = '10.245.0.10';
const REUSED_ELSEWHERE = '10.245.0.11'; // IP held by a live pod on another node (asked of the API by status.podIP)

const rules: DnatRule[] = [
  { protocol: 'udp', service: '10.96.0.10', servicePort: 53, target: OWNED, targetPort: 53 },
  { protocol: 'udp', service: '10.96.0.11', servicePort: 53, target: TERMINATING, targetPort: 53 },
  { protocol: 'udp', service: '10.96.0.12', servicePort: 53, target: NEVER, targetPort: 53 },
  { protocol: 'udp', service: '10.96.0.13', servicePort: 53, target: REUSED_POD, targetPort: 53 },
  { protocol: 'udp', service: '10.96.0.14', servicePort: 53, target: REUSED_OTHER_PORT, targetPort: 53 },
  { protocol: 'tcp', service: '10.96.0.20', servicePort: 80, target: NEVER_TCP, targetPort: 8080 },
  { protocol: 'udp', service: '10.96.0.15', servicePort: 53, target: REUSED_ELSEWHERE, targetPort: 53 },
];

/** The CLI against the stand-in (`--kubeconfig`, this node = node-a), or with `--endpoints FILE` given in args. */
async function stale(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const source = args.includes('--endpoints') ? [] : ['--kubeconfig', kubeconfig, '--node-name', 'node-a'];
  // Asynchronous: the stand-in answers from this process's event loop.
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'conntrack', 'stale', '--netns', node.node, ...source, ...args], { env: { ...process.env, NODE_NAME: '' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

interface StaleJson {
  counts: Record<string, number>;
  groups: Array<{ service: { protocol: string; address: string; port: number }; entries: Array<{ target: { address: string; port: number }; protocol: string; timeout: number; state: string | null }> }>;
  delete: null | { requested: number; deleted: number; alreadyGone: number; failed: number; byProtocol: Record<string, unknown>; remaining: number };
}

describe('conndrain conntrack stale (real conntrack in a node namespace)', () => {
  before(async () => {
    node.setup(rules, { 'net.netfilter.nf_conntrack_udp_timeout': '600' });
    const objects = [
      sliceObject('kube-system', 'kube-dns', [{ port: 53, protocol: 'UDP' }], [
        { ip: OWNED, ready: true, serving: true, terminating: false },
        { ip: TERMINATING, ready: false, serving: false, terminating: true },
      ]),
      sliceObject('shop', 'web', [{ port: 8080, protocol: 'TCP' }], [{ ip: REUSED_OTHER_PORT, ready: true, serving: true, terminating: false }]),
      podObject('tools', 'hostport-pod', 'node-a', REUSED_POD),
      podObject('old', 'finished', 'node-a', NEVER, 'Succeeded'), // a finished pod does not hold its IP
      podObject('batch', 'elsewhere', 'node-b', REUSED_ELSEWHERE), // live, on another node
    ];
    writeInventory(endpoints, objects);
    await api.start();
    api.writeKubeconfig(kubeconfig);
    for (const o of objects as Array<{ kind: string } & Record<string, unknown>>) {
      if (o.kind === 'EndpointSlice') api.putEndpointSlice(o);
      else api.putPod(o);
    }
    node.sendUdp('10.96.0.10', 53, 2);
    node.sendUdp('10.96.0.11', 53, 2);
    node.sendUdp('10.96.0.12', 53, 3);
    node.sendUdp('10.96.0.13', 53, 2);
    node.sendUdp('10.96.0.14', 53, 2);
    node.sendTcp('10.96.0.20', 80, 2);
    node.sendUdp('10.96.0.15', 53, 2);
  });

  after(async () => {
    await api.close();
    node.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds exactly the never-owned targets, grouped by service with protocol, state and timeout', async () => {
    const r = await stale('--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as StaleJson;
    const found = out.groups.flatMap((g) => g.entries.map((e) => `${g.service.protocol} ${g.service.address}:${g.service.port} -> ${e.target.address}:${e.target.port}`)).sort();
    assert.deepEqual(found, [
      `tcp 10.96.0.20:80 -> ${NEVER_TCP}:8080`,
      `tcp 10.96.0.20:80 -> ${NEVER_TCP}:8080`,
      `udp 10.96.0.12:53 -> ${NEVER}:53`,
      `udp 10.96.0.12:53 -> ${NEVER}:53`,
      `udp 10.96.0.12:53 -> ${NEVER}:53`,
      `udp 10.96.0.14:53 -> ${REUSED_OTHER_PORT}:53`,
      `udp 10.96.0.14:53 -> ${REUSED_OTHER_PORT}:53`,
    ]);
    assert.deepEqual({ owned: out.counts.owned, podIp: out.counts['pod-ip'] }, { owned: 4, podIp: 4 });
    assert.ok(api.requests.some((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && r.query.limit === '500'), 'EndpointSlices listed from the stand-in');
    assert.ok(api.requests.some((r) => r.path === '/api/v1/pods' && r.query.fieldSelector === `status.podIP=${REUSED_ELSEWHERE}`), 'the API asked who holds the target IP');
    const tcp = out.groups.find((g) => g.service.protocol === 'tcp')?.entries[0];
    assert.equal(tcp?.state, 'SYN_SENT');
    assert.ok((tcp?.timeout ?? 0) > 0);
    const udp = out.groups.find((g) => g.service.address === '10.96.0.12')?.entries[0];
    assert.ok((udp?.timeout ?? 0) > 500, 'remaining timeout from the kernel (udp timeout 600 in this namespace)');
    assert.equal(out.delete, null);
    assert.equal(node.entriesTo(NEVER, 53), 3, 'a dry run deletes nothing');
  });

  it('prints the service groups for people (endpoints from an offline file: the same findings)', async () => {
    const r = await stale('--endpoints', endpoints);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /udp 10\.96\.0\.12:53: 3 stale/);
    assert.match(r.stdout, /7 stale entries \(udp=5 tcp=2\)/, 'the file\'s live pods (any node) guard their IPs as the API does');
    assert.match(r.stdout, /Dry run: nothing deleted/);
  });

  it('--delete removes exactly the stale entries (by tuple) and leaves every owned, terminating and reused target', async () => {
    const r = await stale('--delete', '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as StaleJson;
    assert.deepEqual(out.delete, { requested: 7, deleted: 7, alreadyGone: 0, failed: 0, byProtocol: { udp: { deleted: 5, alreadyGone: 0, failed: 0 }, tcp: { deleted: 2, alreadyGone: 0, failed: 0 } }, remaining: 0 });
    assert.equal(node.entriesTo(NEVER, 53), 0);
    assert.equal(node.entriesTo(NEVER_TCP, 8080), 0);
    assert.equal(node.entriesTo(REUSED_OTHER_PORT, 53), 0, 'stale on 53 although an endpoint has the address on 8080: the exact delete takes only these');
    assert.equal(node.entriesTo(OWNED, 53), 2);
    assert.equal(node.entriesTo(TERMINATING, 53), 2);
    assert.equal(node.entriesTo(REUSED_POD, 53), 2);
    assert.equal(node.entriesTo(REUSED_ELSEWHERE, 53), 2);
  });

  it('rejects a broken endpoints file and touches nothing', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, '{ kind: EndpointSlice, endpoints: 7 }\n');
    const r = await stale('--delete', '--endpoints', broken);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /endpoints is not a list/);
    assert.equal(node.entriesTo(OWNED, 53), 2);
  });
});
