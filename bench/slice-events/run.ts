/**
 * The agent's work for one EndpointSlice watch event past the socket: the protobuf frame decoded
 * (kube/protobuf), viewed against the kept slice (src/endpoints/slice-view.ts), compared, merged
 * and upserted (src/endpoints/endpoint-index.ts), planned (agent/endpoints/endpoint-planner.ts),
 * all through the endpoints runnable's own `upsertSlice`, in one process with no network and
 * no other work: microseconds and young collections per event, where bench/scale's figure
 * (CPU of a whole agent on a shared two-core machine) moves by points from run to run.
 *
 * The cluster: `--slices` Services' slices of `--endpoints` endpoints each, encoded as
 * kube-apiserver frames them (test/apiserver/protobuf.ts), every namespace opted in. Each mix
 * is a sequence of frames made before the clock starts:
 *   flip     a readiness flip (serving and ready toggled; the slice keeps its order)
 *   replace  an endpoint leaves its slice and a new pod (new uid, name, address) is appended
 *            not serving, as a rollout's replacement arrives
 *
 *   node --import tsx --conditions=conndrain-source bench/slice-events/run.ts [--slices 2000] [--endpoints 75] [--events 20000] [--rounds 5] [--mix flip,replace] [--alloc-prof DIR]
 *
 * Run it with the agent's V8 flags (manifests/base/agent/daemonset.yaml: `--max-semi-space-size=1
 * --heap-growing-percent=20`): the young generation's size decides what allocation costs.
 * `--alloc-prof DIR`: a sampling profile of every allocation of the last round of each mix
 * (collected or not), written there as `<mix>.heapprofile`.
 *
 * Printed per mix: microseconds an event, wall and CPU of every thread (V8's GC helpers too),
 * median and best of the rounds; young collections an event and the share of the time in GC (young collections apart). Compare only runs made side by side.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { EndpointsRunnable } from '../../agent/endpoints/endpoints-runnable.js';
import { AgentMetrics } from '../../agent/runtime/metrics.js';
import { readWatchEvent } from '../../kube/protobuf/watch-event.js';
import type { KubeConnection } from '../../kube/connection.js';
import type { RawSlice } from '../../src/endpoints/slice-view.js';
import { encodeEndpointSlice, envelope, watchFrame } from '../../test/apiserver/protobuf.js';
import { systemClock } from '../../time/clock.js';

type JsonObject = Parameters<typeof encodeEndpointSlice>[0];

const { values } = parseArgs({
  options: {
    slices: { type: 'string', default: '2000' },
    endpoints: { type: 'string', default: '75' },
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    mix: { type: 'string', default: 'flip,replace' },
    'alloc-prof': { type: 'string' },
  },
});
const SLICES = Number(values.slices);
const ENDPOINTS = Number(values.endpoints);
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);

interface Endpoint {
  uid: string;
  name: string;
  ip: string;
  node: string;
  serving: boolean;
}

let nextPod = 0;
function newEndpoint(serving: boolean): Endpoint {
  const i = nextPod++;
  return {
    uid: randomUUID(), name: `checkout-${(i >>> 6).toString(16).padStart(9, '0')}-${(i % 36 ** 5).toString(36).padStart(5, '0')}`,
    ip: `10.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}`, node: `node-${1 + (i % 4999)}`, serving,
  };
}

function sliceJson(s: number, eps: readonly Endpoint[], rv: number): JsonObject {
  return {
    metadata: {
      name: `svc-${s}-abcde`, generateName: `svc-${s}-`, namespace: `ns-${s % 50}`, uid: `00000000-0000-4000-8000-${s.toString().padStart(12, '0')}`,
      resourceVersion: String(rv), generation: rv, creationTimestamp: '2026-12-01T00:00:00Z',
      labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': `svc-${s}`, app: `svc-${s}` },
    },
    addressType: 'IPv4',
    endpoints: eps.map((e) => ({
      addresses: [e.ip], conditions: { ready: e.serving, serving: e.serving, terminating: false }, nodeName: e.node,
      targetRef: { kind: 'Pod', namespace: `ns-${s % 50}`, name: e.name, uid: e.uid },
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

/** A watch frame as FrameSplitter hands it on (the 4-byte length stripped). */
function frameOf(json: JsonObject): Buffer {
  return watchFrame('MODIFIED', envelope('discovery.k8s.io/v1', 'EndpointSlice', encodeEndpointSlice(json))).subarray(4);
}

const cluster = Array.from({ length: SLICES }, () => Array.from({ length: ENDPOINTS }, () => newEndpoint(true)));
let rv = 1;
const listed = cluster.map((eps, s) => frameOf(sliceJson(s, eps, rv++)));

function framesOf(mix: string): Buffer[] {
  const out: Buffer[] = [];
  let seed = 12345;
  const random = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  for (let k = 0; k < EVENTS; k++) {
    const s = random(SLICES);
    const eps = cluster[s] as Endpoint[];
    const i = random(eps.length);
    if (mix === 'flip') {
      const e = eps[i] as Endpoint;
      e.serving = !e.serving;
    } else {
      eps.splice(i, 1);
      eps.push(newEndpoint(false));
    }
    out.push(frameOf(sliceJson(s, eps, rv++)));
  }
  return out;
}

const kube: KubeConnection = { getCurrentCluster: () => ({ server: 'http://127.0.0.1:1' }), applyToFetchOptions: () => Promise.resolve({}) };

interface RunnableInside {
  optedIn: Set<string>;
  announced: boolean;
  upsertSlice(raw: RawSlice): void;
}

function newRunnable(): EndpointsRunnable {
  const runnable = new EndpointsRunnable({
    kube, clock: systemClock, logger: pino({ level: 'silent' }), metrics: new AgentMetrics(), relistBackoffMaxMs: 30_000,
    debounceMs: 500, terminatingMaxMs: 3_600_000, freshMs: 60_000, isLocalPod: () => false, nodeName: 'node-0',
  });
  const inside = runnable as unknown as RunnableInside;
  for (let s = 0; s < 50; s++) inside.optedIn.add(`ns-${s}`);
  for (const frame of listed) inside.upsertSlice(readWatchEvent(frame).object as RawSlice);
  inside.announced = true;
  return runnable;
}

let scavenges = 0;
let gcMs = 0;
let youngMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    if ((e as { detail?: { kind?: number } }).detail?.kind === 1) {
      scavenges += 1;
      youngMs += e.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });

console.log(`slices ${SLICES} x ${ENDPOINTS} endpoints, ${EVENTS} events a round, ${ROUNDS} rounds, node ${process.version}, load ${(await import('node:os')).loadavg()[0]?.toFixed(2)}`);
for (const mix of values.mix.split(',')) {
  const frames = framesOf(mix);
  const perEvent: number[] = [];
  const cpuPerEvent: number[] = [];
  let young = 0;
  let gcShare = 0;
  let youngShare = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const runnable = newRunnable() as unknown as RunnableInside;
    await new Promise((r) => setTimeout(r, 50));
    const profiling = values['alloc-prof'] !== undefined && round === ROUNDS - 1 ? new Session() : undefined;
    profiling?.connect();
    profiling?.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    scavenges = 0;
    gcMs = 0;
    youngMs = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (const frame of frames) runnable.upsertSlice(readWatchEvent(frame).object as RawSlice);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (profiling !== undefined) {
      const dir = values['alloc-prof'] as string;
      await new Promise<void>((resolve) => profiling.post('HeapProfiler.stopSampling', (error, result) => {
        if (error === null) writeFileSync(join(dir, `${mix}.heapprofile`), JSON.stringify((result as { profile: unknown }).profile));
        profiling.disconnect();
        resolve();
      }));
    }
    await new Promise((r) => setTimeout(r, 0)); // the gc entries of the round
    perEvent.push((ms * 1000) / frames.length);
    cpuPerEvent.push((cpu.user + cpu.system) / frames.length);
    young += scavenges / frames.length / ROUNDS;
    gcShare += gcMs / ms / ROUNDS;
    youngShare += youngMs / ms / ROUNDS;
    await (runnable as unknown as EndpointsRunnable).stop();
  }
  perEvent.sort((a, b) => a - b);
  cpuPerEvent.sort((a, b) => a - b);
  const mid = Math.floor(ROUNDS / 2);
  console.log(`${mix.padEnd(8)} us/event: wall median ${perEvent[mid]?.toFixed(1)} best ${perEvent[0]?.toFixed(1)}, CPU (all threads) median ${cpuPerEvent[mid]?.toFixed(1)} best ${cpuPerEvent[0]?.toFixed(1)}  young GCs/event ${young.toFixed(3)}  GC share ${(100 * gcShare).toFixed(1)} % (young ${(100 * youngShare).toFixed(1)} %)`);
}
