/**
 * Flow pinning on a real kernel. Runs INSIDE the QEMU guest (test/vm, real IPVS + nftables),
 * started by flowpin.vm.test.ts. Not a *.test.ts file: the host has no IPVS.
 *
 * The field's failure, minimally: a client streams over TCP to VIP 10.96.100.1:80 through
 * node-2 (IPVS mh with mh-fallback,mh-port, IPIP tunnel = DSR, sloppy_tcp=1) to pods A and B
 * behind node-1. Pod A turns unready: node-1 (no connection to A) deletes A's real server,
 * node-2 (carrying flows) sets it to weight 0, as kube-router does. Then node-2 dies and the
 * client's route moves to node-1.
 * - without conndrain, A's streams reach node-1 mid-flow, IPVS schedules them (sloppy_tcp)
 *   without A (deleted) -> B answers with a reset: the stream breaks;
 * - with conndrain (the IPVS hold + flow pinning on both nodes), the non-SYN packets get the
 *   twin's mark, the twin sends them to A: no reset, no lost byte. New connections during
 *   the drain (SYNs: the original service, A at weight 0) never reach A.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import type { IpvsServiceKey } from 'netlink-native/types';
import { DEFAULT_FWMARK_RANGE, inRange, parseFwmarkRange } from '../../../src/flowpin/fwmark-range.js';
import { parsePinCounters } from '../../../src/flowpin/nft-ruleset.js';
import { IpvsHold } from '../ipvs-hold.js';
import { cleanupFlowpin } from './cleanup.js';
import { FlowpinController } from './controller.js';
import { createNft, type NftApi } from './nft.js';

if (!existsSync('/proc/net/ip_vs')) {
  throw new Error('dsr-survival.guest.ts runs inside the IPVS test VM (test/vm); use agent/ipvs/flowpin/flowpin.vm.test.ts');
}

const VIP = '10.96.100.1';
const CLIENT = '10.9.9.9';
const POD_A = '10.244.1.11';
const POD_B = '10.244.1.12';
const SERVICE: IpvsServiceKey = { family: 4, protocol: 'tcp', address: VIP, port: 80 };
const MH_FALLBACK_PORT = 0x08 | 0x10;
const here = new URL('.', import.meta.url).pathname;
const logger = pino({ level: 'silent' });
const parsedRange = parseFwmarkRange(DEFAULT_FWMARK_RANGE);
if (!parsedRange.ok) throw new Error(parsedRange.error);
const range = parsedRange.value;

function sh(command: string): string {
  return execFileSync('sh', ['-ec', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

interface JsonLine { k: string; [key: string]: unknown }

class Proc {
  private readonly lines: JsonLine[] = [];
  private waiters: (() => void)[] = [];
  readonly child: ChildProcessWithoutNullStreams;
  stderr = '';

  constructor(ns: string, script: string, args: string[]) {
    this.child = spawn('ip', ['netns', 'exec', ns, process.execPath, `${here}testdata/${script}`, ...args]);
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      try {
        this.lines.push(JSON.parse(line) as JsonLine);
      } catch {
        return;
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  async next(kind: string, timeoutMs = 60_000): Promise<JsonLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.lines.findIndex((l) => l.k === kind);
      if (index >= 0) return this.lines.splice(index, 1)[0] as JsonLine;
      if (Date.now() > deadline) throw new Error(`no ${kind} line within ${timeoutMs} ms; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  send(command: object): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  stop(): void {
    this.child.kill('SIGKILL');
  }
}

interface Node {
  ns: string;
  ipvs: NativeNetlink;
  nft: NftApi;
  hold: IpvsHold;
  flowpin: FlowpinController;
}

class Lab {
  readonly ns: { client: string; n1: string; n2: string; a: string; b: string };
  readonly procs: Proc[] = [];
  readonly nodes: Node[] = [];
  client!: Proc;

  constructor(readonly prefix: string) {
    this.ns = { client: `${prefix}c`, n1: `${prefix}n1`, n2: `${prefix}n2`, a: `${prefix}pa`, b: `${prefix}pb` };
  }

  async up(): Promise<void> {
    const { client: C, n1: N1, n2: N2, a: A, b: B } = this.ns;
    const noRp = (ns: string, ifaces: string[]): string => ['all', 'default', 'lo', ...ifaces].map((i) => `ip netns exec ${ns} sysctl -qw net.ipv4.conf.${i}.rp_filter=0`).join('\n');
    sh(`
      for ns in ${C} ${N1} ${N2} ${A} ${B}; do ip netns add $ns; ip -n $ns link set lo up; done
      ip -n ${C} link add c1 type veth peer name u1 netns ${N1}
      ip -n ${C} link add c2 type veth peer name u2 netns ${N2}
      ip -n ${N1} link add x1 type veth peer name x2 netns ${N2}
      ip -n ${N1} link add pa type veth peer name eth0 netns ${A}
      ip -n ${N1} link add pb type veth peer name eth0 netns ${B}
      ip -n ${C} addr add ${CLIENT}/32 dev lo
      ip -n ${C} addr add 10.1.1.1/30 dev c1; ip -n ${C} link set c1 up
      ip -n ${C} addr add 10.1.2.1/30 dev c2; ip -n ${C} link set c2 up
      ip -n ${C} route add ${VIP}/32 via 10.1.2.2 src ${CLIENT}
      ${noRp(C, ['c1', 'c2'])}
      for n in ${N1} ${N2}; do ip -n $n addr add ${VIP}/32 dev lo; ip netns exec $n sysctl -qw net.ipv4.ip_forward=1 net.ipv4.vs.sloppy_tcp=1 net.ipv4.conf.all.accept_local=1; done
      ip -n ${N1} addr add 10.1.1.2/30 dev u1; ip -n ${N1} link set u1 up
      ip -n ${N1} addr add 10.3.0.1/30 dev x1; ip -n ${N1} link set x1 up
      ip -n ${N1} route add ${CLIENT}/32 via 10.1.1.1
      for p in pa pb; do ip -n ${N1} addr add 10.244.1.1/32 dev $p; ip -n ${N1} link set $p up; done
      ip -n ${N1} route add ${POD_A}/32 dev pa
      ip -n ${N1} route add ${POD_B}/32 dev pb
      ${noRp(N1, ['u1', 'x1', 'pa', 'pb'])}
      for i in u1 x1 pa pb; do ip netns exec ${N1} sysctl -qw net.ipv4.conf.$i.accept_local=1; done
      ip -n ${N2} addr add 10.1.2.2/30 dev u2; ip -n ${N2} link set u2 up
      ip -n ${N2} addr add 10.3.0.2/30 dev x2; ip -n ${N2} link set x2 up
      ip -n ${N2} route add ${CLIENT}/32 via 10.1.2.1
      ip -n ${N2} route add 10.244.1.0/24 via 10.3.0.1
      ${noRp(N2, ['u2', 'x2'])}
      for pod in ${A}:${POD_A} ${B}:${POD_B}; do
        ns=\${pod%%:*}; ip=\${pod#*:}
        ip -n $ns addr add $ip/32 dev eth0; ip -n $ns link set eth0 up
        ip -n $ns route add 10.244.1.1/32 dev eth0; ip -n $ns route add default via 10.244.1.1
        ip -n $ns addr add ${VIP}/32 dev lo
        ip -n $ns link set tunl0 up
        ${['all', 'default', 'lo', 'eth0', 'tunl0'].map((i) => `ip netns exec $ns sysctl -qw net.ipv4.conf.${i}.rp_filter=0`).join('; ')}
      done
    `);
    for (const [ns, name] of [[A, 'pod-a'], [B, 'pod-b']] as const) {
      const server = new Proc(ns, 'dsr-server.mjs', [name]);
      this.procs.push(server);
      await server.next('ready');
    }
    // The service proxy (kube-router with DSR + Maglev) programs both nodes the same way:
    // endpoints A then B, IPIP tunnel, weight 1.
    for (const ns of [N1, N2]) {
      const ipvs = openNetlink({ netns: ns });
      await ipvs.addService({ key: SERVICE, scheduler: 'mh', flags: MH_FALLBACK_PORT });
      for (const address of [POD_A, POD_B]) await ipvs.addDestination(SERVICE, { address, port: 80, weight: 1, forwarding: 'tunnel', tunnelType: 'ipip' });
      const nft = createNft({ prefix: ['ip', 'netns', 'exec', ns], timeoutMs: 120_000 }); // TCG guests on a busy host are slow
      const hold = new IpvsHold({ ipvs, logger, skipService: (key) => key.fwmark !== undefined && inRange(range, key.fwmark) });
      const flowpin = new FlowpinController({ ipvs, nft, range, logger: logger.child({ node: ns }), held: () => hold.list(), readSloppyTcp: () => Promise.resolve(Number(sh(`ip netns exec ${ns} cat /proc/sys/net/ipv4/vs/sloppy_tcp`).trim())) });
      this.nodes.push({ ns, ipvs, nft, hold, flowpin });
    }
    this.client = new Proc(C, 'dsr-client.mjs', [VIP, '80', CLIENT]);
    this.procs.push(this.client);
    await this.client.next('ready');
  }

  node(i: 1 | 2): Node {
    return this.nodes[i - 1] as Node;
  }

  async streams(ports: number[]): Promise<{ port: number; pod: string | null; error: string | null }[]> {
    this.client.send({ op: 'streams', ports });
    return (await this.client.next('streams')).streams as { port: number; pod: string | null; error: string | null }[];
  }

  async probe(ports: number[]): Promise<{ port: number; pod: string | null; error: string | null }[]> {
    this.client.send({ op: 'probe', ports, timeoutMs: 3000 });
    return (await this.client.next('probe', 180_000)).results as { port: number; pod: string | null; error: string | null }[];
  }

  async stop(): Promise<{ port: number; pod: string; sent: number; received: number | null; error: string | null; closedEarly: boolean; done: boolean }[]> {
    this.client.send({ op: 'stop', waitMs: 4000 });
    return (await this.client.next('stopped')).streams as { port: number; pod: string; sent: number; received: number | null; error: string | null; closedEarly: boolean; done: boolean }[];
  }

  /** Pod A turns unready; with conndrain the agents hold it (and pin its flows) on both nodes first. */
  async drainA(withConndrain: boolean): Promise<void> {
    const draining = [{ uid: 'uid-a', key: 'shop/pod-a', ips: [POD_A] }];
    if (withConndrain) {
      for (const n of this.nodes) {
        await n.hold.sync(draining, new Set());
        await n.flowpin.sync();
      }
    }
    // kube-router: node-1 has no connection to A and deletes its server; node-2 keeps it at 0.
    await this.node(1).ipvs.deleteDestination(SERVICE, { address: POD_A, port: 80 });
    await this.node(2).ipvs.setDestinationWeight(SERVICE, { address: POD_A, port: 80 }, 0);
    if (withConndrain) {
      for (const n of this.nodes) {
        await n.hold.sync(draining, new Set()); // node-1: re-added at weight 1, then edited to 0
        await n.flowpin.sync();
      }
    }
  }

  /** node-2 dies: its links go down and the client's route (BGP) moves to node-1. */
  killNode2(): void {
    sh(`ip -n ${this.ns.n2} link set u2 down; ip -n ${this.ns.n2} link set x2 down; ip -n ${this.ns.client} route replace ${VIP}/32 via 10.1.1.2 src ${CLIENT}`);
  }

  async down(): Promise<void> {
    for (const p of this.procs) p.stop();
    for (const n of this.nodes) {
      await n.flowpin.stop();
      n.ipvs.close();
    }
    for (const ns of Object.values(this.ns)) {
      try {
        sh(`ip netns del ${ns}`);
      } catch {
        // already gone
      }
    }
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

const STREAM_PORTS = Array.from({ length: 12 }, (_, i) => 40001 + i);

async function runScenario(t: { diagnostic(message: string): void }, prefix: string, withConndrain: boolean): Promise<{ lab: Lab; results: Awaited<ReturnType<Lab['stop']>>; probes: Awaited<ReturnType<Lab['probe']>> }> {
  const lab = new Lab(prefix);
  labs.push(lab);
  await lab.up();
  const opened = await lab.streams(STREAM_PORTS);
  t.diagnostic(`streams opened through node-2: ${JSON.stringify(opened.map((s) => `${s.port}->${s.pod ?? s.error}`))}`);
  assert.ok(opened.every((s) => s.pod !== null), `every stream reached a pod: ${JSON.stringify(opened)}`);
  assert.ok(opened.some((s) => s.pod === 'pod-a') && opened.some((s) => s.pod === 'pod-b'), `streams to both pods: ${JSON.stringify(opened)}`);
  await sleep(1500);
  await lab.drainA(withConndrain);
  await sleep(1000);
  const duringDrain = await lab.probe(Array.from({ length: 12 }, (_, i) => 41001 + i));
  lab.killNode2();
  await sleep(4000);
  const afterLoss = await lab.probe(Array.from({ length: 12 }, (_, i) => 42001 + i));
  await sleep(1000);
  const results = await lab.stop();
  t.diagnostic(`${withConndrain ? 'with' : 'without'} conndrain: ${JSON.stringify(results.map((r) => ({ port: r.port, pod: r.pod, sent: r.sent, received: r.received, error: r.error, closedEarly: r.closedEarly })))}`);
  return { lab, results, probes: [...duringDrain, ...afterLoss] };
}

const labs: Lab[] = [];
after(async () => {
  for (const lab of labs) await lab.down();
});

describe('flow pinning: DSR + Maglev, a draining pod keeps its flows when their node dies', () => {
  test('without conndrain: the streams to the draining pod break after node-2\'s loss (reset or lost bytes)', { timeout: 300_000 }, async (t) => {
    const { results } = await runScenario(t, 'fpw', false);
    const toA = results.filter((r) => r.pod === 'pod-a');
    assert.ok(toA.length > 0);
    for (const r of toA) assert.ok(r.error !== null || r.closedEarly || r.received !== r.sent, `a stream to the draining pod survived without conndrain: ${JSON.stringify(r)}`);
    for (const r of results.filter((x) => x.pod === 'pod-b')) assert.ok(r.error === null && r.received === r.sent, `a stream to pod-b broke: ${JSON.stringify(r)}`);
  });

  test('with conndrain: every stream survives with no reset and no lost byte; new connections never reach the draining pod; cleanup leaves nothing', { timeout: 300_000 }, async (t) => {
    const { lab, results, probes } = await runScenario(t, 'fpc', true);
    assert.ok(results.some((r) => r.pod === 'pod-a'));
    for (const r of results) {
      assert.equal(r.error, null, `stream ${r.port} to ${r.pod} failed: ${JSON.stringify(r)}`);
      assert.equal(r.closedEarly, false, `stream ${r.port} closed early: ${JSON.stringify(r)}`);
      assert.equal(r.received, r.sent, `stream ${r.port} to ${r.pod} lost bytes: ${JSON.stringify(r)}`);
    }
    assert.ok(probes.length === 24 && probes.every((p) => p.pod === 'pod-b'), `new connections during the drain: ${JSON.stringify(probes)}`);

    // On node-1 the pin rule marked the moved flows' packets, and the twin carries their connections.
    const n1 = lab.node(1);
    const marked = [...parsePinCounters(await n1.nft.listTable()).values()].reduce((a, b) => a + b, 0);
    t.diagnostic(`node-1: ${marked} packets pinned to the twin`);
    assert.ok(marked > 0);
    const twin = (await n1.ipvs.listServices()).find((s) => s.key.fwmark !== undefined && inRange(range, s.key.fwmark));
    assert.ok(twin !== undefined, 'twin on node-1');
    const twinDests = await n1.ipvs.listDestinations(twin.key);
    const a = twinDests.find((d) => d.address === POD_A);
    assert.equal(a?.weight, 1, 'the draining pod at its original weight in the twin');
    assert.ok((a?.activeConnections ?? 0) + (a?.inactiveConnections ?? 0) > 0, `the twin scheduled the moved flows to pod A: ${JSON.stringify(twinDests)}`);
    const originalDests = await n1.ipvs.listDestinations(SERVICE);
    assert.equal(originalDests.find((d) => d.address === POD_A)?.weight, 0, 'the original keeps A at 0');

    // The pod goes: the proxy deletes its server, the hold releases; the pin rule goes at once.
    await n1.ipvs.deleteDestination(SERVICE, { address: POD_A, port: 80 });
    await n1.hold.sync([], new Set());
    const report = await n1.flowpin.sync();
    t.diagnostic(`node-1 after pod gone: ${JSON.stringify(report.plan.twins.map((tw) => ({ state: tw.state, connections: tw.connections })))}`);
    const listing = (await n1.nft.listTable()) as { nftables: { rule?: { chain: string } }[] } | undefined;
    assert.equal(listing?.nftables.filter((i) => i.rule?.chain === 'prerouting').length ?? 0, 0, 'no pin rule left once the pod is gone');
    assert.equal((await n1.ipvs.listDestinations(twin.key).catch(() => [])).some((d) => d.address === POD_A), false, 'the gone pod left the twin');

    // conndrain agent --cleanup on both nodes: no table, no mark, no twin.
    for (const n of lab.nodes) {
      await cleanupFlowpin({ ipvs: n.ipvs, nft: n.nft, range, logger });
      assert.equal(await n.nft.listTable(), undefined, `${n.ns}: table left`);
      assert.deepEqual((await n.ipvs.listServices()).filter((s) => s.key.fwmark !== undefined), [], `${n.ns}: twin left`);
      assert.equal(sh(`ip netns exec ${n.ns} nft -j list ruleset`).includes('conndrain'), false);
    }
  });
});
