/**
 * The decode of one pod as the agent receives it, full vs field-masked (kube/json-mask.ts):
 * N pods of ~6 KB as bench/scale's API stand-in serves them (bench/agent/fat-pod.ts), on the
 * list path (kube/list-decoder.ts over 64 KB chunks of one PodList) and the watch path (one
 * JSON line per event), each item pruned as the agent does (prunePod). Printed per pod:
 *
 * - ns: wall time per pod, the median of `--rounds` alternating passes;
 * - heap bytes allocated: V8 heap used after a pass minus before it, measured over a batch
 *   small enough that no GC runs in between (young generation enlarged; a pass where a GC ran
 *   is not counted), so it is everything the decode allocated, kept or not;
 * - buffers: ArrayBuffer bytes allocated the same way (Buffer copies of items split across chunks).
 *
 *   node --expose-gc --max-semi-space-size=128 --import tsx --conditions=conndrain-source bench/list-decode/run.ts [--pods 10000] [--rounds 7]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { ListDecoder } from '../../kube/list-decoder.js';
import { watchMasks } from '../../kube/watch-fields.js';
import type { PodLike } from '../../src/pod/pod-like.js';
import { POD_FIELDS, prunePod } from '../../src/pod/prune.js';
import { fatPod } from '../agent/fat-pod.js';
import { podDrainId, podIp, podName, podNamespace, podNode, podUid } from '../scale/cluster.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '7' }, batch: { type: 'string', default: '500' } } });
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
const BATCH = Number(values.batch);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function pod(i: number): unknown {
  const p = fatPod({ name: podName(i), namespace: podNamespace(i), nodeName: podNode(i, PODS), ips: [podIp(i)], uid: podUid(i), drainId: podDrainId(i) }, i) as Record<string, unknown>;
  return { kind: 'Pod', apiVersion: 'v1', ...p, metadata: { ...(p.metadata as object), resourceVersion: String(1000 + i) } };
}

const pods = Array.from({ length: PODS }, (_, i) => JSON.stringify(pod(i)));
const meanBytes = pods.reduce((s, p) => s + Buffer.byteLength(p), 0) / PODS;

/** A PodList of pods [from, to) in 64 KB chunks. */
function listChunks(from: number, to: number): Buffer[] {
  const body = Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"99"},"items":[${pods.slice(from, to).join(',')}]}`);
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += 65536) out.push(body.subarray(at, at + 65536));
  return out;
}
const lines = pods.map((p) => Buffer.from(`{"type":"MODIFIED","object":${p}}`));

const masks = watchMasks(POD_FIELDS);
let sink = 0;
const keep = (p: PodLike): void => {
  sink += p.metadata?.name?.length ?? 0;
};

type Path = (from: number, to: number) => void;
const chunksByBatch = new Map<number, Buffer[]>();
const chunksOf = (from: number, to: number): Buffer[] => {
  let c = chunksByBatch.get(from);
  if (c === undefined) chunksByBatch.set(from, (c = listChunks(from, to)));
  return c;
};
const list =
  (masked: boolean): Path =>
  (from, to) => {
    const d = new ListDecoder((item) => keep(prunePod(item as PodLike)), undefined, masked ? masks.item : undefined);
    for (const c of chunksOf(from, to)) d.write(c);
    d.end();
  };
const watch =
  (masked: boolean): Path =>
  (from, to) => {
    for (let i = from; i < to; i++) {
      const line = lines[i] as Buffer;
      const event = JSON.parse(masked ? masks.event.apply(line) : line.toString('utf8')) as { object: PodLike };
      keep(prunePod(event.object));
    }
  };

const paths: Array<[string, Path]> = [
  ['list, full parse', list(false)],
  ['list, masked', list(true)],
  ['watch, full parse', watch(false)],
  ['watch, masked', watch(true)],
];

let gcs = 0;
new PerformanceObserver((l) => {
  gcs += l.getEntries().length;
}).observe({ entryTypes: ['gc'] });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

for (let b = 0; b < PODS; b += BATCH) chunksOf(b, Math.min(PODS, b + BATCH));
const times = new Map<string, number[]>(paths.map(([n]) => [n, []]));
const heap = new Map<string, number[]>(paths.map(([n]) => [n, []]));
const buffers = new Map<string, number[]>(paths.map(([n]) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of round % 2 === 0 ? paths : [...paths].reverse()) {
    let ns = 0n;
    for (let b = 0; b < PODS; b += BATCH) {
      const to = Math.min(PODS, b + BATCH);
      gc();
      await tick(); // the gc observer's entries arrive asynchronously
      const gcsBefore = gcs;
      const h0 = getHeapStatistics().used_heap_size;
      const a0 = process.memoryUsage().arrayBuffers;
      const t0 = process.hrtime.bigint();
      run(b, to);
      ns += process.hrtime.bigint() - t0;
      const h1 = getHeapStatistics().used_heap_size;
      const a1 = process.memoryUsage().arrayBuffers;
      await tick();
      if (round > 0 && gcs === gcsBefore + 1) {
        // +1: the gc() above (observed after the tick); nothing ran during the pass
        heap.get(name)?.push((h1 - h0) / (to - b));
        buffers.get(name)?.push((a1 - a0) / (to - b));
      }
    }
    if (round > 0) times.get(name)?.push(Number(ns) / PODS);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.floor(s.length / 2)] as number);
};
console.log(`${PODS} pods of ${Math.round(meanBytes)} bytes of JSON each; ${ROUNDS - 1} measured rounds (alternating order); load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('path                   ns/pod   heap bytes/pod  buffer bytes/pod  (passes without GC)');
for (const [name] of paths) {
  console.log(`${name.padEnd(20)} ${median(times.get(name) ?? []).toFixed(0).padStart(8)} ${median(heap.get(name) ?? []).toFixed(0).padStart(16)} ${median(buffers.get(name) ?? []).toFixed(0).padStart(17)}  (${heap.get(name)?.length ?? 0})`);
}
const ratio = (a: string, b: string): string => (median(times.get(b) ?? []) / median(times.get(a) ?? [])).toFixed(2);
console.log(`masked/full time: list ${ratio('list, full parse', 'list, masked')}, watch ${ratio('watch, full parse', 'watch, masked')}`);
if (sink < 0) console.log(sink);
