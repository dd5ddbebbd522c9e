/**
 * bench/agent: the agent's two budgets.
 *
 * 1. Reaction time: from a watch event (a pod turns unready in the API stand-in) to weight 0
 *    on EVERY IPVS real server of that pod, with 1,000 IPVS services on the node. IPVS here is
 *    the in-memory stand-in (native/lib/memory-ipvs.ts): the host kernel has no IPVS. Goal < 50 ms.
 *    Baseline, run side by side: the IPVS hold pass alone (IpvsHold.sync on the same table,
 *    no watch, no plan); the ratio shows what the watch + plan path adds.
 *    `--ipvs kernel` uses the kernel's IPVS through netlink-native instead (run it inside the
 *    QEMU guest, as root: `npx tsx test/vm/run.ts --timeout 1800 -- 'cd REPO && node --import tsx
 *    bench/agent/run.ts --only latency --ipvs kernel --iterations 5'`; under TCG every syscall
 *    and instruction is emulated, so its figures are an upper bound of the real cost).
 *    `--only handover`: the same reaction time with a second agent instance overlapping (the
 *    zero-gap handover of docs/handover.md: both bound to the same ports with SO_REUSEPORT, the
 *    older one sent into handOver() with a held drain call, the newer one owning the state
 *    file and, once it has the older one's holds, editing IPVS alone), and with an agent that
 *    started with drain calls waiting at its start-up hold (ids not known before the first pod
 *    list), side by side with one agent alone. Each run has a state file of its own.
 * 2. Memory: RSS of the real agent process (compiled as the image ships it, plain node) with
 *    10,000 managed pods in its cache. Goal < 150 MB. Baseline: the same process with 0 pods.
 *
 *   node --import tsx bench/agent/run.ts [--iterations 20] [--services 1000] [--pods 10000] [--only latency|rss] [--ipvs memory|kernel]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MemoryConntrack } from 'netlink-native/memory';
import { MemoryIpvs } from 'netlink-native/memory';
import type { IpvsApi, IpvsServiceKey } from 'netlink-native/types';
import { Agent } from '../../agent/agent.js';
import { AgentMetrics } from '../../agent/runtime/metrics.js';
import { IpvsHold } from '../../agent/ipvs/ipvs-hold.js';
import { DEFAULT_FLOW_TIMEOUTS } from '../../agent/drain/flows.js';
import { loadKubeConnection } from '../../kube/load.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { putWorkload } from '../../test/apiserver/workload.js';
import { managedPod, setReady } from '../../test/apiserver/pods.js';
import { forwardIpvs, memoryNetlink } from './stand-ins.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ITERATIONS = arg('iterations', 20);
const SERVICES = arg('services', 1000);
const PODS = arg('pods', 10_000);
/** `--only latency` or `--only rss`: one half (profiling). */
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const HELD = arg('held', 0);
/** `--ipvs kernel`: the kernel's IPVS (inside the QEMU guest); default: the in-memory stand-in. */
const KERNEL_IPVS = args.includes('--ipvs') && args[args.indexOf('--ipvs') + 1] === 'kernel';
const TARGET = '10.40.0.1';
const REPO = new URL('../..', import.meta.url).pathname;

function serviceKey(i: number): IpvsServiceKey {
  return { family: 4, protocol: 'tcp', address: `10.96.${i >> 8}.${i & 255}`, port: 80 };
}

/** `services` mh services; the target pod is a real server of the first `held` of them. */
async function buildTable(services: number, held: number): Promise<IpvsApi> {
  const ipvs = KERNEL_IPVS ? await emptyKernelIpvs() : new MemoryIpvs();
  for (let i = 0; i < services; i++) {
    const key = serviceKey(i);
    await ipvs.addService({ key, scheduler: 'mh' });
    await ipvs.addDestination(key, { address: `10.41.${i >> 8}.${i & 255}`, port: 8080, weight: 1 });
    await ipvs.addDestination(key, { address: `10.42.${i >> 8}.${i & 255}`, port: 8080, weight: 1 });
    if (i < held) await ipvs.addDestination(key, { address: TARGET, port: 8080, weight: 1 });
  }
  return ipvs;
}

let kernelIpvs: (IpvsApi & { close(): void }) | undefined;

/** The kernel's IPVS through netlink-native (one handle for the run), every service deleted. */
async function emptyKernelIpvs(): Promise<IpvsApi> {
  if (kernelIpvs === undefined) {
    const { openNetlink } = await import('netlink-native');
    kernelIpvs = openNetlink();
  }
  const api = kernelIpvs;
  for (const service of await api.listServices()) await api.deleteService(service.key);
  // A fresh object per table: watchToWeightZero wraps the weight methods on it.
  return forwardIpvs(api);
}

function stats(samples: number[]): { median: number; p95: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { median: at(0.5), p95: at(0.95), max: s[s.length - 1] ?? NaN };
}

async function holdPassAlone(held: number): Promise<number[]> {
  const out: number[] = [];
  // The kernel's table is built once (4,000 netlink calls) and the target's weights put back.
  const shared = KERNEL_IPVS ? await buildTable(SERVICES, held) : undefined;
  for (let i = 0; i < ITERATIONS; i++) {
    const ipvs = shared ?? (await buildTable(SERVICES, held));
    if (shared !== undefined) for (let s = 0; s < held; s++) await shared.setDestinationWeight(serviceKey(s), { address: TARGET, port: 8080 }, 1);
    const hold = new IpvsHold({ ipvs, logger: pino({ level: 'silent' }) });
    const t0 = performance.now();
    await hold.sync([{ uid: 'u', key: 'shop/target', ips: [TARGET] }], new Set());
    out.push(performance.now() - t0);
  }
  return out;
}

/** Polls `check` every 20 ms; a setup step that never completes fails the run with its name instead of hanging it. */
async function waitFor(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`bench setup: ${what} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let runs = 0;

/**
 * `overlap`: a second agent instance beside the first; `handover`: the first then in
 * handOver(); `startup`: one agent that started with drain calls held at its start-up hold.
 */
async function watchToWeightZero(held: number, dir: string, overlap: false | 'overlap' | 'handover' | 'startup' = false): Promise<number[]> {
  const api = new FakeApiServer();
  await api.start();
  // A state file per run: one left by an earlier run would resume its drain session, which
  // may end before this run's call joins it (the call is then answered at once and no session
  // ever shows: the hang of `--held 1000 --rounds 2`).
  const tag = `${held}-${overlap === false ? 'alone' : overlap}-${++runs}`;
  const kubeconfig = api.writeKubeconfig(join(dir, `kubeconfig-${tag}`));
  putWorkload(api); // the opted-in namespace and Service: agents learn other nodes' pods from its EndpointSlices
  api.putPod(managedPod({ name: 'target', nodeName: 'node-0', ips: [TARGET] }));
  for (let i = 0; i < 50; i++) api.putPod(managedPod({ name: `other-${i}`, nodeName: 'node-0', ips: [`10.41.0.${i}`] }));
  const ipvs = await buildTable(SERVICES, held);
  // Observe the moment the last held server reaches weight 0 (and the release back to 1). Sets
  // of services, not counts of edits: with two agents overlapping both may edit a server.
  const zeroes = new Set<string>();
  const restored = new Set<string>();
  let onZero = (): void => undefined;
  let onRestored = (): void => undefined;
  const realSet = ipvs.setDestinationWeight.bind(ipvs);
  const realSetMany = ipvs.setDestinationWeights.bind(ipvs);
  const observe = (service: IpvsServiceKey, address: string, w: number): void => {
    if (address !== TARGET) return;
    const id = `${service.address}:${service.port}`;
    if (w === 0 && !zeroes.has(id)) {
      zeroes.add(id);
      if (zeroes.size === held) onZero();
    }
    if (w > 0 && !restored.has(id)) {
      restored.add(id);
      if (restored.size === held) onRestored();
    }
  };
  ipvs.setDestinationWeight = async (s, d, w) => {
    await realSet(s, d, w);
    observe(s, d.address, w);
  };
  ipvs.setDestinationWeights = async (edits) => {
    const results = await realSetMany(edits);
    edits.forEach((e, i) => {
      if (results[i] === undefined) observe(e.service, e.destination.address, e.weight);
    });
    return results;
  };
  const config = loadAgentConfig({ flags: { nodeName: 'node-0', kubeconfig, stateFile: join(dir, `state-${tag}.json`), logLevel: 'silent' }, env: {} });
  if (!config.ok) throw new Error(config.error.join('; '));
  const kube = await loadKubeConnection({ kubeconfig });
  const conntrack = new MemoryConntrack();
  const { listenReusePort } = await import('netlink-native');
  const makeAgent = (ports: { drainPort: number; metricsPort: number }): Agent => new Agent({
    config: { ...config.value, ...ports, metricsAddress: '127.0.0.1', metricsSecure: false, probesPort: 0 },
    logger: pino({ level: 'silent' }),
    netlink: memoryNetlink(conntrack, ipvs),
    kube,
    flowTimeouts: DEFAULT_FLOW_TIMEOUTS,
    metrics: new AgentMetrics({ defaultMetrics: false }),
    listenSocket: (host, port) => listenReusePort(host, port),
  });
  const agent = makeAgent({ drainPort: 0, metricsPort: 0 });
  const ports = await agent.start();
  let startupCalls: Array<Promise<unknown>> = [];
  if (overlap === 'startup') {
    // Sent before the first pod list is in: held by the start-up hold, then answered 404.
    startupCalls = Array.from({ length: 20 }, (_, i) => fetch(`http://127.0.0.1:${ports.drainPort}/v1/drain/not-known-${i}`).catch(() => undefined));
  }
  await waitFor('agent ready', () => agent.readiness().ready);
  await Promise.all(startupCalls);
  let newer: Agent | undefined;
  let heldCall: Promise<unknown> | undefined;
  let handover: Promise<void> | undefined;
  if (overlap === 'overlap' || overlap === 'handover') {
    // A pod whose drain the older agent holds (its flow never closes), a newer agent on the
    // same ports and state file; 'handover': then SIGTERM's handOver() on the older one.
    await conntrack.insertConntrackForTest([{ protocol: 'tcp', origSrc: '192.0.2.1', origDst: '10.43.0.1', dstPort: 8080, state: 'ESTABLISHED', timeout: 3600 }]);
    api.putPod(managedPod({ name: 'held', nodeName: 'node-0', ips: ['10.43.0.1'], drain: '10m' }));
    await waitFor('the held pod in the cache', () => agent.cache.byDrain('drain-held') !== undefined);
    heldCall = fetch(`http://127.0.0.1:${ports.drainPort}/v1/drain/drain-held`).catch(() => undefined);
    await waitFor('the held drain session', () => agent.snapshot().sessions.length > 0);
    // The newer one finds the older one through the state file.
    await waitFor('the state file written', () => existsSync(config.value.stateFile));
    newer = makeAgent(ports);
    await newer.start();
    const second = newer;
    await waitFor('newer agent ready', () => second.readiness().ready);
    await waitFor('newer agent edits IPVS (has the older one\'s holds)', () => second.ownsIpvs && !agent.ownsIpvs);
    if (overlap === 'handover') handover = agent.handOver();
  }
  const samples: number[] = [];
  try {
    for (let i = 0; i < ITERATIONS + 2; i++) {
      zeroes.clear();
      const zero = new Promise<void>((resolve) => (onZero = resolve));
      const t0 = performance.now();
      api.modifyPod('shop', 'target', (p) => setReady(p, false));
      await withTimeout(zero, `iteration ${i}: weight 0 on all ${held} servers`);
      if (i >= 2) samples.push(performance.now() - t0); // 2 warm-up rounds
      restored.clear();
      const back = new Promise<void>((resolve) => (onRestored = resolve));
      api.modifyPod('shop', 'target', (p) => setReady(p, true));
      await withTimeout(back, `iteration ${i}: original weight back on all ${held} servers`);
      await new Promise((r) => setTimeout(r, 300)); // isolated events: let the previous pass and state write finish
    }
  } finally {
    await agent.stop();
    await newer?.stop();
    await handover;
    await heldCall;
    await api.close();
  }
  return samples;
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: ${what} not reached in ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Compiles the shipped code (tsconfig.build.json) as the agent image does, into dist/bench-agent. */
function buildDist(): string {
  const out = join(REPO, 'dist', 'bench-agent');
  // tsc emits even when another area's in-progress file fails the type check.
  spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.build.json'), '--outDir', out], { cwd: REPO, stdio: 'ignore' });
  const main = join(out, 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`build failed: ${main} missing`);
  return main;
}

function vmRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? NaN) / 1024;
}

/**
 * RSS of the real agent process (compiled JS, plain node: what the image runs) once its cache
 * holds `pods` managed pods, all Ready on other nodes. Conntrack-only (--ipvs-hold=false),
 * nothing goes, so it only reads the conntrack counters. The API stand-in runs in a process
 * of its own.
 */
async function rssOfAgent(pods: number, dir: string, main: string): Promise<{ pods: number; rssMb: number }> {
  const kubeconfig = join(dir, `kc-rss-${pods}`);
  const server = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/agent/api-child.ts'), kubeconfig, String(pods)], { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] });
  let agent: ReturnType<typeof spawn> | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('exit', (code) => reject(new Error(`api child exited ${String(code)}`)));
      server.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
    });
    const metricsPort = 19_000 + (pods % 1000);
    agent = spawn(process.execPath, [main, 'agent', '--node-name', 'bench-node', '--kubeconfig', kubeconfig, '--state-file', join(dir, `state-rss-${pods}.json`),
      '--drain-port', String(metricsPort + 1), '--metrics-port', String(metricsPort), '--metrics-address', '127.0.0.1', '--metrics-secure=false', '--probes-port', String(metricsPort + 2), '--ipvs-hold=false', '--janitor=false', '--flow-pinning=false', '--log-level', 'warn'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
    const deadline = Date.now() + 300_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('agent not ready in 300 s');
      try {
        const ready = await fetch(`http://127.0.0.1:${metricsPort + 2}/readyz`);
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const cached = Number(/conndrain_pods_cached (\d+)/.exec(text)?.[1] ?? -1);
        if (ready.status === 200 && cached === pods) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 5000)); // settle (GC after the initial list)
    return { pods, rssMb: vmRssMb(agent.pid ?? 0) };
  } finally {
    // Wait for both to exit: the agent writes its state file on SIGTERM (then the dir is removed).
    const exited = (child: ReturnType<typeof spawn> | undefined): Promise<unknown> => (child === undefined || child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r)));
    const waits = [exited(agent), exited(server)];
    agent?.kill('SIGTERM');
    server.stdin.end();
    await Promise.all(waits);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cd-bench-agent-'));
try {
  console.log(`bench/agent: ${SERVICES} IPVS services (${KERNEL_IPVS ? 'the kernel\'s IPVS through netlink-native' : 'in-memory stand-in: no IPVS on the host kernel'}), ${ITERATIONS} iterations, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (ONLY === 'handover') {
    // Alternating runs (alone, overlap, alone, overlap ...) so drift in the machine's load hits both.
    const rounds = arg('rounds', 3);
    for (const held of HELD > 0 ? [HELD] : [SERVICES, 1]) {
      const alone: number[] = [];
      const overlap: number[] = [];
      const handover: number[] = [];
      const startup: number[] = [];
      /** The one-agent runs of even and odd rounds: their ratio is the noise of an A/A comparison. */
      const aloneHalves: [number[], number[]] = [[], []];
      for (let r = 0; r < rounds; r++) {
        const one = await watchToWeightZero(held, dir, false);
        alone.push(...one);
        aloneHalves[r % 2]?.push(...one);
        overlap.push(...(await watchToWeightZero(held, dir, 'overlap')));
        handover.push(...(await watchToWeightZero(held, dir, 'handover')));
        startup.push(...(await watchToWeightZero(held, dir, 'startup')));
      }
      const a = stats(alone);
      const o = stats(overlap);
      const h = stats(handover);
      const s = stats(startup);
      const vs = (x: ReturnType<typeof stats>): string => `median ${x.median.toFixed(1)} ms, p95 ${x.p95.toFixed(1)} ms, ratio of medians ${(x.median / a.median).toFixed(2)}`;
      console.log(`held servers ${String(held).padStart(4)}: watch event -> weight 0 (${alone.length} samples each) | one agent: median ${a.median.toFixed(1)} ms, p95 ${a.p95.toFixed(1)} ms | older handing over to newer: ${vs(h)} | both running (before SIGTERM): ${vs(o)} | after a start-up hold of 20 calls: ${vs(s)} | noise, one agent vs one agent (even vs odd rounds): ratio of medians ${rounds > 1 ? (stats(aloneHalves[0]).median / stats(aloneHalves[1]).median).toFixed(2) : 'n/a (one round)'} | load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    }
    process.exit(0);
  }
  for (const held of ONLY === 'rss' ? [] : [SERVICES, 1]) {
    const alone = stats(await holdPassAlone(held));
    const e2e = stats(await watchToWeightZero(held, dir));
    console.log(`held servers ${String(held).padStart(4)}: watch event -> weight 0 on all: median ${e2e.median.toFixed(1)} ms, p95 ${e2e.p95.toFixed(1)} ms, max ${e2e.max.toFixed(1)} ms | baseline hold pass alone: median ${alone.median.toFixed(1)} ms | ratio ${(e2e.median / alone.median).toFixed(2)} (goal < 50 ms)`);
  }
  if (ONLY === 'latency') {
    kernelIpvs?.close();
    process.exit(0);
  }
  const main = buildDist();
  const idle = await rssOfAgent(0, dir, main);
  const full = await rssOfAgent(PODS, dir, main);
  console.log(`agent RSS (compiled, plain node ${process.version}): ${full.rssMb.toFixed(1)} MB with ${full.pods} managed pods | baseline 0 pods: ${idle.rssMb.toFixed(1)} MB | +${(((full.rssMb - idle.rssMb) * 1024) / Math.max(1, full.pods)).toFixed(2)} KB per pod (goal < 150 MB)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
