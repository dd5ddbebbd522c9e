/**
 * Zero-gap handover with the real agent processes (spawned through the CLI) in a "node"
 * network namespace, the API server STAND-IN (test/apiserver: no real API server here), and
 * the host kernel's conntrack in that namespace (each pod's open TCP flow is a conntrack entry
 * inserted there; closing the flow deletes it). Both agents bind the same drain and metrics
 * ports (SO_REUSEPORT); the test reaches them through relays, so a refused or reset call shows
 * as an error on the test's side.
 *   SIGTERM: 20 drains held on the first agent; a second one starts; the first is sent SIGTERM.
 *   Every held call is answered only after its flow closed, none reset; calls during the
 *   overlap and after the SIGTERM are answered; the first exits 0; nothing interrupted.
 *   kill -9: the same, but the first dies: the second posts 20 DrainInterrupted Events,
 *   counts them, and still posts one DrainFinished per drain (no second DrainStarted).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { insertConntrackForTest } from 'netlink-native/testing';
import { managedPod } from '../apiserver/pods.js';
import { type AgentProcess, getUnix, isRoot, until } from './node-netns.js';
import { AgentNode } from './agent-node.js';

const skip = isRoot() ? false : 'needs root (network namespaces)';
const node = new AgentNode('cdho');
const api = node.api;
const DRAINS = 20;

before(async () => {
  if (skip === false) await node.start();
});

after(() => node.stop());

function startAgent(stateFile: string): AgentProcess {
  return node.startAgent([stateFile], ['--hold-interval', '200ms', '--stats-interval', '1s', '--flow-poll-interval', '100ms', '--conntrack-events=false']);
}

async function started(agent: AgentProcess): Promise<void> {
  await agent.waitFor('agent started', (l) => /agent started/.test(l.msg ?? ''), 120_000);
  await agent.waitFor('first list synced', (l) => /first list synced/.test(l.msg ?? ''), 120_000);
}

interface Call {
  id: string;
  sentAt: number;
  answeredAt?: number;
  status?: number;
  summary?: { ended: string; elapsedMs: number };
  error?: string;
}

function call(id: string): { call: Call; done: Promise<Call> } {
  const c: Call = { id, sentAt: Date.now() };
  const done = getUnix(node.path('drain.sock'), `/v1/drain/${id}`).then(
    (r) => {
      c.answeredAt = Date.now();
      c.status = r.status;
      try {
        c.summary = JSON.parse(r.body) as Call['summary'];
      } catch {
        c.error = `not JSON: ${r.body}`;
      }
      return c;
    },
    (error: unknown) => {
      c.answeredAt = Date.now();
      c.error = String(error);
      return c;
    },
  );
  return { call: c, done };
}

async function openFlows(prefix: string): Promise<void> {
  const inserted = await insertConntrackForTest(node.netlink, Array.from({ length: DRAINS }, (_, i) => ({ protocol: 'tcp' as const, origSrc: '192.0.2.50', origDst: `${prefix}.${i + 1}`, srcPort: 40_000 + i, dstPort: 8080, state: 'ESTABLISHED' as const, timeout: 3600 })));
  assert.equal(inserted.failed, 0);
}

async function closeFlow(ip: string): Promise<void> {
  await node.netlink.deleteConntrack({ addresses: [ip], match: ['origDst'] });
}

function putPods(name: string, prefix: string, count: number, drain: string): void {
  for (let i = 0; i < count; i++) api.putPod(managedPod({ name: `${name}${i}`, nodeName: 'node-1', ips: [`${prefix}.${i + 1}`], drain, minDrain: '1s' }));
}

function reasonsOf(pod: string): string[] {
  return api.events.filter((e) => (e.involvedObject as { name: string }).name === pod).map((e) => String(e.reason));
}

const drainsStarted = (agent: AgentProcess, name: string): number => agent.lines.filter((l) => /^drain started$/.test(l.msg ?? '') && String(l.pod).startsWith(`shop/${name}`)).length;

test(`SIGTERM handover: ${DRAINS} held drains end only when their flows close, none reset; calls during the overlap answered; 0 refused`, { skip, timeout: 600_000 }, async () => {
  putPods('h', '10.30.0', DRAINS, '90s');
  putPods('n', '10.30.1', 10, '30s'); // no flows: idle at min-drain
  await openFlows('10.30.0');
  const first = startAgent('state-term.json');
  await started(first);
  await until('ready', async () => (await getUnix(node.path('probes.sock'), '/readyz').catch(() => ({ status: 0 }))).status === 200, 60_000);

  const held = Array.from({ length: DRAINS }, (_, i) => call(`drain-h${i}`));
  await until(`${DRAINS} drains held on the first agent`, () => drainsStarted(first, 'h') === DRAINS, 60_000);

  const second = startAgent('state-term.json');
  await started(second);
  await first.waitFor('the newer instance connected', (l) => /a newer agent instance connected/.test(l.msg ?? ''), 60_000);
  const overlap = await Promise.all(Array.from({ length: 5 }, (_, i) => call(`drain-n${i}`).done));

  first.kill('SIGTERM');
  await first.waitFor('listeners closed', (l) => /handover: listeners closed/.test(l.msg ?? ''), 60_000);
  const afterTerm = await Promise.all(Array.from({ length: 5 }, (_, i) => call(`drain-n${i + 5}`).done));

  // Close the flows one by one; each call must be answered after its own flow closed.
  const closedAt = new Map<string, number>();
  for (let i = 0; i < DRAINS; i++) {
    closedAt.set(`drain-h${i}`, Date.now());
    await closeFlow(`10.30.0.${i + 1}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  const answers = await Promise.all(held.map((h) => h.done));
  assert.equal(await first.exited, 0, 'the first agent exits 0 once every held call is answered');

  const problems: string[] = [];
  for (const a of answers) {
    if (a.error !== undefined || a.status !== 200) problems.push(`${a.id}: ${a.error ?? a.status}`);
    else if (a.summary?.ended !== 'idle') problems.push(`${a.id}: ended ${a.summary?.ended}`);
    else if ((a.answeredAt ?? 0) < (closedAt.get(a.id) ?? Infinity)) problems.push(`${a.id}: answered before its flow closed`);
  }
  for (const a of [...overlap, ...afterTerm]) if (a.error !== undefined || a.status !== 200 || a.summary?.ended !== 'idle') problems.push(`${a.id} (new call): ${a.error ?? a.status} ${a.summary?.ended}`);
  assert.deepEqual(problems, [], 'no reset, refusal, error or early answer');
  assert.equal(second.lines.filter((l) => /drain started/.test(l.msg ?? '') && String(l.pod).startsWith('shop/n')).length >= 5, true, 'the calls after SIGTERM reached the second agent');

  await until('events', () => Array.from({ length: DRAINS }, (_, i) => reasonsOf(`h${i}`)).every((r) => r.includes('DrainFinished')), 30_000);
  for (let i = 0; i < DRAINS; i++) assert.deepEqual(reasonsOf(`h${i}`), ['DrainStarted', 'DrainFinished'], `h${i}`);
  assert.ok(!api.events.some((e) => e.reason === 'DrainInterrupted'));
  assert.match((await getUnix(node.path('metrics.sock'), '/metrics')).body, /conndrain_drains_interrupted_total 0\n/);
  second.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

test(`kill -9 during the overlap: the second agent posts ${DRAINS} DrainInterrupted Events, counts them, and one DrainFinished each`, { skip, timeout: 600_000 }, async () => {
  putPods('k', '10.31.0', DRAINS, '90s');
  await openFlows('10.31.0');
  const first = startAgent('state-kill.json');
  await started(first);
  await until('ready', async () => (await getUnix(node.path('probes.sock'), '/readyz').catch(() => ({ status: 0 }))).status === 200, 60_000);
  const held = Array.from({ length: DRAINS }, (_, i) => call(`drain-k${i}`));
  await until(`${DRAINS} drains held on the first agent`, () => drainsStarted(first, 'k') === DRAINS, 60_000);
  const second = startAgent('state-kill.json');
  await started(second);
  await first.waitFor('the newer instance connected', (l) => /a newer agent instance connected/.test(l.msg ?? ''), 60_000);

  first.kill('SIGKILL');
  await first.exited;
  const cut = await Promise.all(held.map((h) => h.done));
  assert.ok(cut.every((c) => c.error !== undefined), 'kill -9: the kubelet side sees every held call cut');
  await second.waitFor('interrupted', (l) => /drains interrupted/.test(l.msg ?? ''), 30_000);
  await until('DrainInterrupted Events', () => api.events.filter((e) => e.reason === 'DrainInterrupted').length === DRAINS, 30_000);
  assert.match((await getUnix(node.path('metrics.sock'), '/metrics')).body, new RegExp(`conndrain_drains_interrupted_total ${DRAINS}\\n`));

  for (let i = 0; i < DRAINS; i++) await closeFlow(`10.31.0.${i + 1}`);
  await until('DrainFinished from the second agent', () => Array.from({ length: DRAINS }, (_, i) => reasonsOf(`k${i}`)).every((r) => r.includes('DrainFinished')), 30_000);
  for (let i = 0; i < DRAINS; i++) assert.deepEqual(reasonsOf(`k${i}`), ['DrainStarted', 'DrainInterrupted', 'DrainFinished'], `k${i}`);
  const interrupted = api.events.find((e) => e.reason === 'DrainInterrupted');
  assert.equal(interrupted?.type, 'Warning');
  second.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});
