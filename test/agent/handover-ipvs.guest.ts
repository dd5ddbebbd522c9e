/**
 * IPVS across a real two-process handover, on a real kernel's IPVS. Runs INSIDE the QEMU guest
 * (test/vm), started by handover-ipvs.vm.test.ts. Each scenario is one "node" namespace
 * (test/agent/agent-node.ts: the API server stand-in, relayed drain and metrics ports) with a
 * real `wrr` IPVS service: pod P1's server at its original weight 7, pod P2's at 3, a third
 * server at 1 that no pod owns. A sampler reads the kernel's weights every ~10 ms for the whole
 * scenario and keeps every change.
 *   1. Agent A (a real process) runs; P1 turns unready and its preStop call is held (an open
 *      flow): A holds P1's server at 0. B then reads the state file as it was just before A's
 *      write of that hold landed (a copy without holds: the window the take/holds exchange
 *      covers; agent/ipvs/handover-ipvs.test.ts does the same in-process).
 *   2. Agent B starts on the same ports (SO_REUSEPORT) while A runs, follows A (named in the
 *      file) and takes IPVS over (`take`/`holds` on the handover link, docs/handover.md).
 *   3. P2 turns unready during the overlap, its preStop call is held too.
 *   4. A gets SIGTERM (or kill -9); both pods turn Ready again while A (SIGTERM) still answers
 *      its held calls; then the flows close.
 * The kernel's weights must read 7 -> 0 -> 7 for P1 and 3 -> 0 -> 3 for P2, nothing else (never
 * 1, never 0 again after the restore); the third server stays at 1; A logs no IPVS edit once B
 * took IPVS over. SIGTERM: A exits 0 and every held call is answered after its flow closed,
 * none reset.
 * Not a *.test.ts file: the host kernel has no IPVS.
 */
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import type { IpvsServiceKey } from 'netlink-native/types';
import { insertConntrackForTest } from 'netlink-native/testing';
import { managedPod, setReady } from '../apiserver/pods.js';
import { type AgentProcess, getUnix, type LogLine, until } from './node-netns.js';
import { AgentNode } from './agent-node.js';

if (!existsSync('/proc/net/ip_vs')) throw new Error('handover-ipvs.guest.ts runs inside the IPVS test VM; use test/agent/handover-ipvs.vm.test.ts');

const SVC: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.20', port: 80 };
const P1 = { name: 'p1', ip: '10.40.0.1', weight: 7 };
const P2 = { name: 'p2', ip: '10.40.0.2', weight: 3 };
const OTHER = { ip: '10.40.0.9', weight: 1 };
const IPS = [P1.ip, P2.ip, OTHER.ip];
const AGENT_FLAGS = ['--hold-interval', '200ms', '--stats-interval', '1s', '--flow-poll-interval', '100ms', '--conntrack-events=false'];
/** Agent start under TCG: tsx compiles the import graph (tens of seconds; the first process in the guest pays most). */
const START_MS = 240_000;
/**
 * The compiled CLI the host side built (handover-ipvs.vm.test.ts: scripts/build-cli.mjs into
 * .vm-cache), which starts in seconds under TCG; without it, the sources through tsx.
 */
const CLI_DIR = process.env.CONNDRAIN_HVM_CLI;
const ENTRY = CLI_DIR === undefined || CLI_DIR === '' ? undefined : [join(CLI_DIR, 'main.js')];

const nodes: AgentNode[] = [];
after(async () => {
  for (const node of nodes) await node.stop();
});

type Weights = Record<string, number | undefined>;

/** Reads the service's weights every ~10 ms on its own netlink handle; keeps each change. */
class WeightSampler {
  readonly changes: Array<{ atMs: number; weights: Weights }> = [];
  samples = 0;
  private stopped = false;
  private closed = false;
  private readonly loop: Promise<void>;

  constructor(private readonly netlink: NativeNetlink) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const t0 = Date.now();
    let last = '';
    while (!this.stopped) {
      const dests = await this.netlink.listDestinations(SVC);
      const weights: Weights = {};
      for (const ip of IPS) weights[ip] = dests.find((d) => d.address === ip)?.weight;
      const key = JSON.stringify(weights);
      this.samples += 1;
      if (key !== last) this.changes.push({ atMs: Date.now() - t0, weights });
      last = key;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** The weights `ip` went through, each run of equal samples once (undefined: no server). */
  seriesOf(ip: string): Array<number | undefined> {
    const out: Array<number | undefined> = [];
    for (const c of this.changes) if (out.length === 0 || out.at(-1) !== c.weights[ip]) out.push(c.weights[ip]);
    return out;
  }

  latest(ip: string): number | undefined {
    return this.changes.at(-1)?.weights[ip];
  }

  /** Stops sampling (rejects with the sampler's own failure, if any). */
  async stop(): Promise<void> {
    this.stopped = true;
    try {
      await this.loop;
    } finally {
      if (!this.closed) this.netlink.close();
      this.closed = true;
    }
  }
}

interface Call {
  id: string;
  status?: number;
  ended?: string;
  error?: string;
  answeredAt?: number;
}

function callDrain(node: AgentNode, id: string): Promise<Call> {
  return getUnix(node.path('drain.sock'), `/v1/drain/${id}`).then(
    (r) => {
      const c: Call = { id, status: r.status, answeredAt: Date.now() };
      try {
        c.ended = (JSON.parse(r.body) as { ended?: string }).ended;
      } catch {
        c.error = `not JSON: ${r.body}`;
      }
      return c;
    },
    (error: unknown) => ({ id, error: String(error), answeredAt: Date.now() }),
  );
}

const msgIs = (re: RegExp) => (l: LogLine): boolean => re.test(l.msg ?? '');

async function started(agent: AgentProcess): Promise<void> {
  await agent.waitFor('agent started', msgIs(/^agent started$/), START_MS);
  await agent.waitFor('first list synced', msgIs(/first list synced/), 60_000);
}

async function prepareNode(prefix: string): Promise<{ node: AgentNode; sampler: WeightSampler }> {
  const node = new AgentNode(prefix);
  nodes.push(node);
  await node.start();
  await node.netlink.addService({ key: SVC, scheduler: 'wrr' });
  for (const s of [P1, P2, OTHER]) await node.netlink.addDestination(SVC, { address: s.ip, port: 8080, weight: s.weight, forwarding: 'masq' });
  for (const p of [P1, P2]) node.api.putPod(managedPod({ name: p.name, nodeName: 'node-1', ips: [p.ip], drain: '120s', minDrain: '1s' }));
  // One open flow to each pod: its preStop call is held until the flow closes.
  const inserted = await insertConntrackForTest(node.netlink, [P1, P2].map((p, i) => ({ protocol: 'tcp' as const, origSrc: '192.0.2.60', origDst: p.ip, srcPort: 41_000 + i, dstPort: 8080, state: 'ESTABLISHED' as const, timeout: 3600 })));
  assert.equal(inserted.failed, 0);
  return { node, sampler: new WeightSampler(openNetlink({ netns: node.ns })) };
}

async function weightIs(sampler: WeightSampler, what: string, ip: string, weight: number, timeoutMs = 30_000): Promise<void> {
  await until(what, () => sampler.latest(ip) === weight, timeoutMs, 10);
}

/**
 * B's copy of A's state file as B would read it before A's write of P1's hold landed (every
 * hold removed; A's instance still named as the owner). A copy, not the file itself: A
 * rewrites its file on every change until B connects, which would put the hold back.
 */
function copyWithoutHolds(from: string, to: string): number {
  const state = JSON.parse(readFileSync(from, 'utf8')) as { holds: unknown[] };
  writeFileSync(to, JSON.stringify({ ...state, holds: [] }));
  return state.holds.length;
}

function holdsInFile(path: string): number {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { holds: unknown[] }).holds.length;
  } catch {
    return 0; // not written yet
  }
}

/** The kernel's weights over the run so far: each held pod's server 0 while held, then its own weight back once. */
function assertSeries(sampler: WeightSampler): void {
  assert.deepEqual(sampler.seriesOf(P1.ip), [7, 0, 7], 'P1: held at 0 under both agents, restored once to 7 (never 1, never 0 again)');
  assert.deepEqual(sampler.seriesOf(P2.ip), [3, 0, 3], 'P2: held at 0, restored once to 3');
  assert.deepEqual(sampler.seriesOf(OTHER.ip), [1], 'the server of no pod untouched');
}

async function runScenario(t: TestContext, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const t0 = Date.now();
  const mark = (what: string): void => t.diagnostic(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  const { node, sampler } = await prepareNode(signal === 'SIGTERM' ? 'cdhvt' : 'cdhvk');
  const stateFile = node.path('state.json');
  const agents: Array<[string, AgentProcess]> = [];
  try {
    const a = node.startAgent(['state.json'], AGENT_FLAGS, ENTRY);
    agents.push(['A', a]);
    await started(a);
    mark('agent A started');

    // P1 drains under A alone.
    node.api.modifyPod('shop', P1.name, (p) => setReady(p, false));
    const call1 = callDrain(node, `drain-${P1.name}`);
    await weightIs(sampler, 'A holds P1 at 0', P1.ip, 0);
    await a.waitFor('P1 drain started on A', (l) => /^drain started$/.test(l.msg ?? '') && l.pod === `shop/${P1.name}`, 30_000);
    await until('A wrote the hold', () => holdsInFile(stateFile) === 1, 30_000);
    assert.equal(copyWithoutHolds(stateFile, node.path('state-b.json')), 1);
    mark('P1 held at 0 by A; B\'s state file: A\'s without the hold');

    // B starts while A runs and takes IPVS over.
    const b = node.startAgent(['state-b.json'], AGENT_FLAGS, ENTRY);
    agents.push(['B', b]);
    const loaded = await b.waitFor('B loaded the state file', msgIs(/^state file loaded/), START_MS);
    assert.equal(loaded.holds, 0, 'B read the state file without P1\'s hold (the window the exchange covers)');
    await started(b);
    await a.waitFor('A followed by B', msgIs(/a newer agent instance connected/), 60_000);
    await b.waitFor('B edits IPVS', msgIs(/^handover: this agent instance edits IPVS now$/), 60_000);
    const aLinesAtTakeover = a.lines.length;
    const handed = b.lines.find(msgIs(/handed its IPVS holds over/));
    mark(`B took IPVS over (${handed === undefined ? 'no holds message' : `holds handed over: ${String(handed.holds)}`})`);

    // P2 drains during the overlap.
    node.api.modifyPod('shop', P2.name, (p) => setReady(p, false));
    const call2 = callDrain(node, `drain-${P2.name}`);
    await weightIs(sampler, 'P2 held at 0 during the overlap', P2.ip, 0);
    mark('P2 held at 0');

    a.kill(signal);
    if (signal === 'SIGTERM') await a.waitFor('A closed its listeners', msgIs(/handover: listeners closed/), 60_000);
    else await a.exited;
    mark(`A sent ${signal}`);
    await new Promise((r) => setTimeout(r, 1000)); // several of B's hold passes alone
    assert.equal(sampler.latest(P1.ip), 0, 'P1 still held at 0');
    assert.equal(sampler.latest(P2.ip), 0, 'P2 still held at 0');

    // Both pods Ready again (A, if SIGTERM, still answers its held calls): B restores them.
    const readyAt = Date.now();
    for (const p of [P1, P2]) node.api.modifyPod('shop', p.name, (pod) => setReady(pod, true));
    await until('P1 and P2 restored', () => (sampler.latest(P1.ip) ?? 0) > 0 && (sampler.latest(P2.ip) ?? 0) > 0, 30_000, 10);
    mark(`restored ${Date.now() - readyAt} ms after Ready`);
    await new Promise((r) => setTimeout(r, 1500)); // later passes would show a bounce
    assertSeries(sampler);
    const assertAEditsNothing = (): void => assert.deepEqual(a.lines.slice(aLinesAtTakeover).filter(msgIs(/^ipvs: /)).map((l) => l.msg), [], 'A edits no IPVS server once B took IPVS over');
    assertAEditsNothing();

    const closedAt = Date.now();
    for (const p of [P1, P2]) await node.netlink.deleteConntrack({ addresses: [p.ip], match: ['origDst'] });
    const calls = await Promise.all([call1, call2]);
    mark(`calls: ${JSON.stringify(calls)}`);
    if (signal === 'SIGTERM') {
      assert.equal(await a.exited, 0, 'A exits 0 once its held calls are answered');
      for (const c of calls) {
        assert.equal(c.error, undefined, `${c.id}: not reset`);
        assert.equal(c.status, 200, c.id);
        assert.equal(c.ended, 'idle', `${c.id}: ended when its flow closed`);
        assert.ok((c.answeredAt ?? 0) >= closedAt, `${c.id}: not answered before its flow closed`);
      }
    } else {
      assert.ok(calls[0]?.error !== undefined, 'kill -9: P1\'s call (held by A) is cut');
      await b.waitFor('B counted the interrupted drain', msgIs(/drains interrupted/), 30_000);
    }
    await new Promise((r) => setTimeout(r, 300));
    await sampler.stop();
    mark(`${sampler.samples} samples; changes: ${JSON.stringify(sampler.changes)}`);

    assertSeries(sampler);
    assertAEditsNothing(); // to its exit (SIGTERM: it answered its held calls meanwhile)
    b.kill('SIGTERM');
    assert.equal(await b.exited, 0, 'B exits 0');
  } catch (error) {
    // What the agents said about IPVS and the handover, and what the kernel showed.
    for (const [name, agent] of agents) {
      for (const l of agent.lines) if (/handover|ipvs|state file|IPVS|drain/.test(l.msg ?? '')) t.diagnostic(`${name}: ${JSON.stringify(l)}`);
      for (const line of agent.stderr.slice(-10)) t.diagnostic(`${name} stderr: ${line}`);
    }
    t.diagnostic(`weights: ${JSON.stringify(sampler.changes)}`);
    throw error;
  } finally {
    await sampler.stop().catch(() => undefined);
  }
}

// In a suite: the guest reporter forwards diagnostics of nested tests only (the timeline above).
describe('IPVS across a two-process handover', () => {
  test('SIGTERM during the overlap: P1 restored once to 7, P2 once to 3, on the kernel IPVS; A exits 0; no call reset or early', { timeout: 600_000 }, (t) => runScenario(t, 'SIGTERM'));

  test('kill -9 during the overlap: B still restores P1 to 7 and P2 to 3 once', { timeout: 600_000 }, (t) => runScenario(t, 'SIGKILL'));
});
