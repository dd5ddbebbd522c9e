/**
 * Child of bench/scale/run.ts, run compiled with plain node (as the image runs the agent):
 * the real Agent against the API stand-in, with the in-memory IPVS and conntrack stand-ins
 * (native/lib/memory-*.ts; the conntrack stand-in's event index too, as `--conntrack-events`
 * is on in the DaemonSet). argv: KUBECONFIG STATE_FILE SPEC, SPEC a JSON object:
 * - `pods`: the cluster's pod count (the places of this node's pods follow from it);
 * - `bank1`, `bank2`: the IPVS table has a real server for the pods at places [0, bank1) with
 *   their first IP (podIp(place)) and at places [0, bank2) with their second (podIp(pods +
 *   place)); this node's pods have both (the mixes drain them and replace them);
 * - `ipvs`: false for a node without IPVS (the stand-in answers as a kernel without ip_vs, and
 *   has no server at all);
 * - `flags`: the agent's flags (camelCase, as the DaemonSet's container args give them).
 * Prints JSON lines: `ports`, `ready` (with the time), then one line when a pod IP's last held
 * server reaches weight 0 (`weight0`) and for each conntrack flush (`flush`, its addresses).
 * Stops (writing its state file) when stdin closes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Session } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import { Agent } from '../../agent/agent.js';
import { AgentMetrics } from '../../agent/runtime/metrics.js';
import { DEFAULT_FLOW_TIMEOUTS } from '../../agent/drain/flows.js';
import { loadKubeConnection } from '../../kube/load.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { memoryNetlink } from '../agent/stand-ins.js';
import { AGENT_NODE, podIp, podIpIndex, podNode, serviceAddress, wallMs } from './cluster.js';

interface Spec {
  pods: number;
  bank1: number;
  bank2: number;
  ipvs?: boolean;
  flags: Record<string, string>;
}
const [kubeconfig = '', stateFile = '', specText = '{}'] = process.argv.slice(2);
const spec = JSON.parse(specText) as Spec;
const say = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
/**
 * The probes' lines of the churn (weight 0, flushes), written every 20 ms instead of one write
 * each: a write to the pipe is a system call on the agent's thread, ~0.4 % of a core at 100
 * lines a second, counted as the agent's CPU. Each line carries the time of what it reports.
 */
let probeLines: string[] = [];
const sayLater = (line: Record<string, unknown>): void => {
  if (probeLines.length === 0) setTimeout(() => {
    process.stdout.write(probeLines.join(''));
    probeLines = [];
  }, 20);
  probeLines.push(`${JSON.stringify(line)}\n`);
};

const ipvs = new MemoryIpvs({ unavailable: spec.ipvs === false });
const services = new Set<string>();
/**
 * Which pod addresses have a real server: bank 1 is podIp(place), bank 2 podIp(pods + place),
 * one byte each by podIp's number (a Map of address strings would be the harness's memory in the
 * agent's process, 150,000 entries with `--ipvs-table full`).
 */
const hasServer = new Uint8Array(2 * spec.pods);
/** podIp's number for an address of this cluster's two banks, or -1. */
function podIpNumber(address: string): number {
  const n = podIpIndex(address);
  return n < hasServer.length ? n : -1;
}
/** The IPVS service of a pod address's server (the place's Service). */
function serviceKeyOf(n: number): { family: 4; protocol: 'tcp'; address: string; port: number } {
  return { family: 4, protocol: 'tcp', address: serviceAddress(n % spec.pods), port: 80 };
}
async function addServer(place: number, address: string): Promise<void> {
  const n = podIpNumber(address);
  if (n < 0 || hasServer[n] === 1) return;
  const key = serviceKeyOf(n);
  if (!services.has(key.address)) {
    services.add(key.address);
    await ipvs.addService({ key, scheduler: 'mh' });
  }
  await ipvs.addDestination(key, { address, port: 8080, weight: 1 });
  hasServer[n] = 1;
}
/**
 * The stand-in's table in the agent's heap (the kernel's memory on a node): the heap used after
 * a full collection, before and after its build (gc exposed for these two calls only; the agent
 * has not started).
 */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
collect();
const heapBeforeTable = process.memoryUsage().heapUsed;
for (let p = 0; p < spec.bank1; p++) await addServer(p, podIp(p));
for (let p = 0; p < spec.bank2; p++) await addServer(p, podIp(spec.pods + p));
// This node's pods have both IPs' servers, on a node with IPVS.
if (spec.ipvs !== false) {
  for (let p = 0; p < spec.pods; p++) {
    if (podNode(p, spec.pods) !== AGENT_NODE) continue;
    await addServer(p, podIp(p));
    await addServer(p, podIp(spec.pods + p));
  }
}
collect();
say({ ev: 'ipvs-table', servers: hasServer.reduce((a, b) => a + b, 0), heapMiB: Math.round(((process.memoryUsage().heapUsed - heapBeforeTable) / 1048576) * 10) / 10 });
/**
 * kube-proxy's part: a gone pod's real server is deleted, and added again (weight 1) for the
 * next pod that gets its IP. Done together, a second after the pod's flush (the mixes reuse an
 * IP many seconds later).
 */
function proxyReplaces(addresses: readonly string[]): void {
  setTimeout(() => {
    for (const address of addresses) {
      const n = podIpNumber(address);
      if (n < 0 || hasServer[n] !== 1) continue;
      const key = serviceKeyOf(n);
      const destination = { address, port: 8080 };
      void ipvs.deleteDestination(key, destination).then(() => ipvs.addDestination(key, { ...destination, weight: 1 })).then(() => zeroed.delete(address), () => undefined);
    }
  }, 1000);
}
// The stand-in records every IPVS operation for tests; here that record would grow with the run and count as the agent's memory.
setInterval(() => (ipvs.history.length = 0), 5000).unref();
const ct = new MemoryConntrack();
// The conntrack event index (--conntrack-events, on in the DaemonSet): the stand-in's, over the same table.
const netlink = { ...memoryNetlink(ct, ipvs), openConntrackEvents: (o?: Parameters<MemoryConntrack['openConntrackEvents']>[0]) => ct.openConntrackEvents(o) };
const zeroed = new Set<string>();
const observe = (address: string, weight: number): void => {
  if (weight === 0 && !zeroed.has(address)) {
    zeroed.add(address);
    sayLater({ ev: 'weight0', ip: address, t: wallMs() });
  } else if (weight > 0) zeroed.delete(address);
};
const setOne = netlink.setDestinationWeight.bind(netlink);
const setMany = netlink.setDestinationWeights.bind(netlink);
netlink.setDestinationWeight = async (s, d, w) => {
  await setOne(s, d, w);
  observe(d.address, w);
};
netlink.setDestinationWeights = async (edits) => {
  ipvsCalls.edits += edits.length;
  const results = await setMany(edits);
  edits.forEach((e, i) => {
    if (results[i] === undefined) observe(e.destination.address, e.weight);
  });
  return results;
};
// IPVS passes (one listServices each), service dumps (listDestinations) and weight edits: the hold's work, reported with the loop figures.
const ipvsCalls = { scans: 0, dumps: 0, edits: 0 };
const listServices = netlink.listServices.bind(netlink);
netlink.listServices = () => {
  ipvsCalls.scans += 1;
  return listServices();
};
const listDestinations = netlink.listDestinations.bind(netlink);
netlink.listDestinations = (service) => {
  ipvsCalls.dumps += 1;
  return listDestinations(service);
};
// Other nodes' gone endpoints are flushed by their slices' targets (agent/conntrack/target-flush.ts): one table pass
// (listConntrack with the protocols) then exact deletes of what it found. The table is empty here: the pass is the flush.
const listConntrack = netlink.listConntrack.bind(netlink);
netlink.listConntrack = async (o) => {
  const result = await listConntrack(o);
  if (o?.protocols !== undefined && o.addresses !== undefined) {
    sayLater({ ev: 'flush', addresses: o.addresses, t: wallMs(), by: 'targets' });
    proxyReplaces(o.addresses);
  }
  return result;
};
const deleteConntrack = netlink.deleteConntrack.bind(netlink);
netlink.deleteConntrack = async (o) => {
  const result = await deleteConntrack(o);
  sayLater({ ev: 'flush', addresses: o.addresses, t: wallMs() });
  proxyReplaces(o.addresses);
  return result;
};

// The DaemonSet's flags, with this process's node, API and state file; flow pinning off (it needs nftables, which the stand-ins do not have).
// /metrics is as shipped: HTTPS with a self-signed certificate made at start (`--metrics-secure`, the default), never scraped here.
const config = loadAgentConfig({ flags: { ...spec.flags, nodeName: AGENT_NODE, kubeconfig, stateFile, flowPinning: 'false' }, env: {} });
if (!config.ok) throw new Error(config.error.join('; '));
const agent = new Agent({
  config: { ...config.value, drainPort: 0, metricsPort: 0, metricsAddress: '127.0.0.1', probesPort: 0, drainAddress: '127.0.0.1' },
  logger: pino({ level: config.value.logLevel }),
  netlink,
  kube: await loadKubeConnection({ kubeconfig }),
  flowTimeouts: DEFAULT_FLOW_TIMEOUTS,
  metrics: new AgentMetrics(),
});
/**
 * `--trace-drains` (env BENCH_TRACE_DRAINS=1): when the agent stored each IP's pod as deleting and
 * when it removed it, so a drain the report finds unheld can be told apart: never seen deleting,
 * or seen deleting and gone in the same plan run (the bench's grace is 1 s). Off by default: the
 * map counts as the agent's memory.
 */
const drainTrace = process.env.BENCH_TRACE_DRAINS === '1' ? new Map<string, { deleting?: number; removed?: number }>() : undefined;
if (drainTrace !== undefined) {
  const cache = agent.cache;
  const upsert = cache.upsert.bind(cache);
  const remove = cache.remove.bind(cache);
  const note = (ips: readonly string[], field: 'deleting' | 'removed'): void => {
    const t = wallMs();
    for (const ip of ips) drainTrace.set(ip, { ...drainTrace.get(ip), [field]: t });
  };
  cache.upsert = (pod) => {
    const stored = upsert(pod);
    if (stored.view.deleting) note(stored.view.ips, 'deleting');
    return stored;
  };
  cache.remove = (uidOrPod) => {
    const gone = remove(uidOrPod);
    if (gone !== undefined) note(gone.view.ips, 'removed');
    return gone;
  };
}
const ports = await agent.start();
say({ ev: 'ports', ...ports });
const poll = setInterval(() => {
  if (!agent.readiness().ready) return;
  clearInterval(poll);
  say({ ev: 'ready', t: wallMs(), pods: agent.cache.size });
}, 5);
/** Bytes in MiB, one decimal (the figures this child reports). */
const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
/**
 * `--mem-peak` (env BENCH_MEM_PEAK=1): what the RSS was made of when it was highest, sampled every
 * 20 ms (V8 heap committed and used, ArrayBuffers, anonymous and file-backed pages). Off by
 * default: the sampling costs the agent's CPU.
 */
let memPeak: Record<string, number> | undefined;
if (process.env.BENCH_MEM_PEAK === '1') {
  const statusMb = (text: string, field: string): number => mb(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024);
  setInterval(() => {
    const m = process.memoryUsage();
    if (memPeak !== undefined && mb(m.rss) <= (memPeak.rss ?? 0)) return;
    const status = readFileSync('/proc/self/status', 'utf8');
    memPeak = { rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), arrayBuffers: mb(m.arrayBuffers), anon: statusMb(status, 'RssAnon'), file: statusMb(status, 'RssFile') };
  }, 20).unref();
}
const lines = createInterface({ input: process.stdin });
/** `prof-start`'s session: node:inspector is loaded only when asked to profile (its pages would count as the agent's). */
let inspector: Session | undefined;
// The agent's event-loop delay during the churn: separates the agent's own stalls (GC, work) from waiting for a CPU elsewhere.
const loop = monitorEventLoopDelay({ resolution: 10 });
lines.on('line', (line) => {
  if (line.includes('planned')) say({ ev: 'planned', pods: agent.plannedPods });
  if (line.includes('loop-start')) {
    loop.reset();
    loop.enable();
    ipvsCalls.scans = 0;
    ipvsCalls.dumps = 0;
    ipvsCalls.edits = 0;
  }
  // `{"cmd":"heap","snapshot":PATH?}`: the V8 heap's figures (MB), and a heap snapshot when asked (profiling).
  if (line.includes('"heap"')) {
    const { snapshot } = JSON.parse(line) as { snapshot?: string };
    const h = getHeapStatistics();
    const m = process.memoryUsage();
    say({ ev: 'heap', used: mb(h.used_heap_size), total: mb(h.total_heap_size), limit: mb(h.heap_size_limit), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), rss: mb(m.rss), ...(memPeak === undefined ? {} : { peak: memPeak }) });
    if (snapshot !== undefined) say({ ev: 'snapshot', path: writeHeapSnapshot(snapshot) });
  }
  // `{"cmd":"prof-start"}` / `{"cmd":"prof-stop","path":P}`: V8's CPU profiler and sampling heap profiler over every
  // allocation, collected or not, written to P.cpuprofile and P.heapprofile (profiling).
  if (line.includes('"prof-start"')) {
    void import('node:inspector').then(({ Session }) => {
      const session = new Session();
      inspector = session;
      session.connect();
      session.post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      session.post('Profiler.enable', () => session.post('Profiler.start'));
    });
  }
  if (line.includes('"prof-stop"')) {
    const { path } = JSON.parse(line) as { path: string };
    const session = inspector;
    if (session === undefined) say({ ev: 'prof', path, error: 'the profiler was not started' });
    else session.post('Profiler.stop', (cpuError, cpu) => {
      if (cpuError === null) writeFileSync(`${path}.cpuprofile`, JSON.stringify(cpu.profile));
      session.post('HeapProfiler.stopSampling', (error, result) => {
        if (error === null) writeFileSync(`${path}.heapprofile`, JSON.stringify(result.profile));
        say({ ev: 'prof', path, error: (error ?? cpuError)?.message });
      });
    });
  }
  // `{"cmd":"trace","ips":[..]}`: the drain trace of these IPs (--trace-drains).
  if (line.includes('"trace"')) {
    const { ips } = JSON.parse(line) as { ips: string[] };
    say({ ev: 'trace', ips: Object.fromEntries(ips.map((ip) => [ip, drainTrace?.get(ip) ?? null])) });
  }
  if (line.includes('loop-stop')) {
    loop.disable();
    say({ ev: 'loop', p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, ...ipvsCalls });
  }
});
lines.on('close', () => void agent.stop().then(() => process.exit(0)));
