/**
 * The real agent process (spawned through the CLI) in a "node" network namespace, watching
 * the API server STAND-IN (test/apiserver: no real API server can be installed here), with
 * the host kernel's conntrack in that namespace. The host kernel has no IPVS: the agent runs
 * conntrack-only here (the IPVS hold is tested on the IPVS stand-in in agent/ipvs/ipvs-hold.test.ts
 * and in the QEMU guest in test/agent/agent-ipvs.vm.test.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { insertConntrackForTest } from 'netlink-native/testing';
import { managedPod, markDeleting, setReady } from '../apiserver/pods.js';
import { type AgentProcess, getUnix, isRoot, until } from './node-netns.js';
import { AgentNode } from './agent-node.js';

const skip = isRoot() ? false : 'needs root (network namespaces)';
const node = new AgentNode('cdag');
const api = node.api;

before(async () => {
  if (skip === false) await node.start();
});

after(() => node.stop());

function startAgent(extra: string[]): AgentProcess {
  return node.startAgent(['state', 'state.json'], [
    '--hold-interval', '200ms', '--flush-window', '50ms', '--gone-slack', '0s', '--stats-interval', '300ms', '--flow-poll-interval', '100ms', ...extra,
  ]);
}

async function ready(): Promise<void> {
  await until('agent /readyz 200', async () => {
    try {
      return (await getUnix(node.path('probes.sock'), '/readyz')).status === 200;
    } catch {
      return false;
    }
  }, 120_000);
}

async function metrics(): Promise<string> {
  return (await getUnix(node.path('metrics.sock'), '/metrics')).body;
}

async function entriesOf(ip: string): Promise<number> {
  const list = await node.netlink.listConntrack({ addresses: [ip], match: ['replySrc', 'origDst'] });
  return list.length;
}

function stateFile(): { pods: Array<{ key: string; state: string }> } {
  return JSON.parse(readFileSync(node.path('state', 'state.json'), 'utf8')) as { pods: Array<{ key: string; state: string }> };
}

const VIP = '10.96.0.10';

test('the agent process: a deleted pod\'s conntrack entries go (all protocols, both families), another pod\'s and a reused IP\'s stay; drain API; restart mid-drain resumes from the state file', { skip, timeout: 600_000 }, async () => {
  const inserted = await insertConntrackForTest(node.netlink, [
    // pod a: DNATed service traffic (reply source), direct TCP and UDP, IPIP (DSR), IPv6 direct
    { protocol: 'tcp', origSrc: '192.0.2.1', origDst: VIP, replySrc: '10.20.0.1', dstPort: 80, replySrcPort: 8080, count: 3, state: 'ESTABLISHED', timeout: 3600 },
    { protocol: 'udp', origSrc: '192.0.2.2', origDst: '10.20.0.1', dstPort: 53, count: 2, timeout: 120 },
    { protocol: 'ipip', origSrc: '192.0.2.3', origDst: '10.20.0.1', timeout: 600 },
    { protocol: 'sctp', origSrc: '192.0.2.4', origDst: '10.20.0.1', dstPort: 9000, state: 'ESTABLISHED', timeout: 600 },
    { protocol: 'tcp', origSrc: 'fd00::2', origDst: 'fd20::1', dstPort: 8080, state: 'ESTABLISHED', timeout: 3600 },
    // pod b (lives on)
    { protocol: 'tcp', origSrc: '192.0.2.1', origDst: VIP, replySrc: '10.20.0.2', dstPort: 80, replySrcPort: 8080, srcPort: 20000, count: 2, state: 'ESTABLISHED', timeout: 3600 },
    // 10.20.0.3: c-old is deleted, but c-new already holds the IP
    { protocol: 'udp', origSrc: '192.0.2.1', origDst: VIP, replySrc: '10.20.0.3', dstPort: 53, srcPort: 30000, count: 2, timeout: 120 },
    // pod d: deleted while the agent is down
    { protocol: 'tcp', origSrc: '192.0.2.9', origDst: '10.20.0.4', dstPort: 8080, state: 'ESTABLISHED', timeout: 3600 },
  ]);
  assert.equal(inserted.failed, 0);
  assert.deepEqual([await entriesOf('10.20.0.1'), await entriesOf('fd20::1'), await entriesOf('10.20.0.2'), await entriesOf('10.20.0.3'), await entriesOf('10.20.0.4')], [7, 1, 2, 2, 1]);

  api.putPod(managedPod({ name: 'a', nodeName: 'node-1', ips: ['10.20.0.1', 'fd20::1'] }));
  api.putPod(managedPod({ name: 'b', nodeName: 'node-1', ips: ['10.20.0.2'], drain: '3s', minDrain: '1s' }));
  api.putPod(managedPod({ name: 'c-old', nodeName: 'node-2', ips: ['10.20.0.3'] }));
  api.putPod(managedPod({ name: 'c-new', nodeName: 'node-1', ips: ['10.20.0.3'] }));
  api.putPod(managedPod({ name: 'd', nodeName: 'node-1', ips: ['10.20.0.4'] }));
  api.putPod(managedPod({ name: 'e', nodeName: 'node-1', ips: ['10.20.0.5'], drain: '5s', minDrain: '1s' }));

  // The first agent runs with the conntrack event index (--conntrack-events, the default), the
  // second (after the restart) without it: both paths flush against the real kernel.
  const first = startAgent(['--conntrack-events=true']);
  await first.waitFor('event index on', (l) => /conntrack events: on/.test(l.msg ?? ''), 120_000);
  await ready();
  const m0 = await metrics();
  assert.match(m0, /conndrain_ipvs_available 0/, 'no IPVS on the host kernel: conntrack-only');
  await first.waitFor('conntrack-only said once', (l) => /IPVS is not available/.test(l.msg ?? ''));
  await until('conntrack stats polled', async () => /conndrain_conntrack_entries [1-9]/.test(await metrics()));

  // Drain API (hook kind agent) through the real process: e has no flow -> idle at min-drain;
  // b has open TCP flows -> runs to its 3 s deadline.
  const [e, b, unknown] = await Promise.all([
    getUnix(node.path('drain.sock'), '/v1/drain/drain-e'),
    getUnix(node.path('drain.sock'), '/v1/drain/drain-b'),
    getUnix(node.path('drain.sock'), '/v1/drain/no-such-id'),
  ]);
  assert.equal(unknown.status, 404);
  const eSummary = JSON.parse(e.body) as { ended: string; elapsedMs: number };
  assert.equal(eSummary.ended, 'idle');
  assert.ok(eSummary.elapsedMs >= 1000 && eSummary.elapsedMs < 3000, `e drained in ${eSummary.elapsedMs} ms`);
  const bSummary = JSON.parse(b.body) as { ended: string; elapsedMs: number; openFlows: number };
  assert.equal(bSummary.ended, 'timeout');
  assert.equal(bSummary.openFlows, 2);

  // a and c-old go.
  api.modifyPod('shop', 'a', (p) => markDeleting(p, 30));
  await first.waitFor('a draining (deleting)', (l) => l.pod === 'shop/a' && l.to === 'draining');
  api.deletePod('shop', 'a');
  api.deletePod('shop', 'c-old');
  await first.waitFor('a flushed', (l) => l.pod === 'shop/a' && /ghost cleanup: conntrack entries/.test(l.msg ?? ''));
  // c-old ran on another node: its departure comes from the EndpointSlice, and its flush is skipped for the reused address.
  await first.waitFor('c-old reuse skip', (l) => l.pod === 'shop/c-old' && /(IP|address) reused/.test(l.msg ?? ''));
  assert.equal(await entriesOf('10.20.0.1'), 0, 'a: every protocol flushed');
  assert.equal(await entriesOf('fd20::1'), 0, 'a: IPv6 flushed');
  assert.equal(await entriesOf('10.20.0.2'), 2, 'b untouched');
  assert.equal(await entriesOf('10.20.0.3'), 2, 'the reused IP untouched');
  await until('metrics', async () => /conndrain_ip_reuse_skips_total 1/.test(await metrics()));
  const deleted = await metrics();
  assert.match(deleted, /conndrain_conntrack_index_verify_leftovers_total 0\n/, 'the index deleted everything; the verification pass found nothing left');
  assert.doesNotMatch(deleted, /conndrain_conntrack_index_fallbacks_total\{use="cleanup"\}/);
  for (const [protocol, n] of [['tcp', 4], ['udp', 2], ['ipip', 1], ['sctp', 1]] as const) {
    assert.match(deleted, new RegExp(`conndrain_conntrack_entries_deleted_total\\{protocol="${protocol}"\\} ${n}\n`), `${protocol}: ${n} deleted`);
  }

  // d starts draining; the agent is killed (no chance to write anything more) mid-drain.
  api.modifyPod('shop', 'd', (p) => setReady(p, false));
  await until('state file: d draining', () => existsSync(node.path('state', 'state.json')) && stateFile().pods.some((p) => p.key === 'shop/d' && p.state === 'draining'));
  first.kill('SIGKILL');
  await first.exited;
  api.deletePod('shop', 'd'); // deleted while no agent runs
  assert.equal(await entriesOf('10.20.0.4'), 1);

  const second = startAgent(['--conntrack-events=false']);
  const resumed = await second.waitFor('state loaded', (l) => /state file loaded/.test(l.msg ?? ''), 120_000);
  assert.equal(resumed.pods, 1, 'only d (draining): serving pods (b, c-new, e) have nothing to resume, a and c-old were flushed and forgotten');
  await second.waitFor('d: draining -> gone from the state file', (l) => l.pod === 'shop/d' && l.from === 'draining' && l.to === 'gone');
  await second.waitFor('d flushed', (l) => l.pod === 'shop/d' && /ghost cleanup: conntrack entries/.test(l.msg ?? ''));
  assert.equal(await entriesOf('10.20.0.4'), 0);
  assert.equal(await entriesOf('10.20.0.2'), 2, 'b still untouched');

  const reasons = api.events.map((ev) => `${String((ev.involvedObject as { name: string }).name)}:${String(ev.reason)}`);
  for (const want of ['e:DrainStarted', 'e:DrainFinished', 'a:DrainStarted', 'a:DrainFinished', 'a:ConntrackFlushed', 'd:DrainStarted']) assert.ok(reasons.includes(want), `${want} in ${reasons.join(' ')}`);
  assert.ok(!reasons.some((r) => r.startsWith('c-old:')), 'c-old lived on node-2: no events from node-1');

  // SIGTERM: clean exit, the state file stays for the next agent.
  second.kill('SIGTERM');
  assert.equal(await second.exited, 0);
  assert.ok(existsSync(node.path('state', 'state.json')));
  await first.exited;
});
