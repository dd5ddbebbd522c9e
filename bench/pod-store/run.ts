/**
 * The pod store's memory per pod: fills a PodCache with N pods shaped like a cluster's (UUID
 * uids, conndrain drain ids, generated pod names, 200 namespaces, 5,000 nodes), then churns
 * (replaces) a fraction of them, and prints the V8 heap and ArrayBuffer bytes above the empty
 * store, after a full GC, per pod.
 *
 *   node --expose-gc --import tsx --conditions=conndrain-source bench/pod-store/run.ts [--pods 150000]
 */
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { PodCache } from '../../agent/pods/pod-cache.js';
import type { PodLike } from '../../src/pod/pod-like.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '150000' }, churn: { type: 'string', default: '0.2' } } });
const PODS = Number(values.pods);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

/** Pod i as the watch hands it over: parsed from JSON (flat strings, as a real list's). */
function podAt(i: number, gen = 0): PodLike {
  return JSON.parse(JSON.stringify(podObject(i, gen))) as PodLike;
}
const uidOf = (i: number, gen: number): string => podObject(i, gen).metadata?.uid as string;

const hex = (n: number, width: number): string => (n >>> 0).toString(16).padStart(width, '0').slice(-width);

/** Pod i of generation `gen`: a UUID uid and a 32-hex drain id, both derived from (i, gen). */
export function podObject(i: number, gen = 0): PodLike {
  const ns = `team-${i % 200}`;
  const base = `web-${(i % 997).toString(36)}-7d9f8b6c5d`;
  const mix = Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(gen + 1, 0x85ebca6b);
  return {
    metadata: {
      name: `${base}-${hex(mix, 5)}`,
      namespace: ns,
      uid: `${hex(mix, 8)}-${hex(gen, 4)}-4${hex(i >>> 16, 3)}-8${hex(i >>> 4, 3)}-${hex(i, 4)}${hex(mix >>> 8, 8)}`,
      labels: { app: base, 'conndrain.io/managed': 'true' },
      annotations: { 'conndrain.io/drain': '30s', 'conndrain.io/min-drain': '2s', 'conndrain.io/drain-id': `${hex(mix, 8)}${hex(i, 8)}${hex(gen, 8)}${hex(Math.imul(mix, 31), 8)}` },
    },
    spec: { nodeName: `node-${i % 5000}` },
    status: { phase: 'Running', podIP: `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function measure(): { heap: number; buffers: number } {
  gc?.();
  gc?.();
  return { heap: getHeapStatistics().used_heap_size, buffers: process.memoryUsage().arrayBuffers };
}

const empty = measure();
const cache = new PodCache(0);
const gens = new Int32Array(PODS);
for (let i = 0; i < PODS; i++) cache.upsert(podAt(i));
const uidBytes = gens.byteLength;
const full = measure();
for (let n = 0; n < PODS * Number(values.churn); n++) {
  const at = Math.floor(Math.random() * PODS);
  cache.remove(uidOf(at, gens[at] as number));
  gens[at] = (gens[at] as number) + 1;
  cache.upsert(podAt(at, gens[at]));
}
const churned = measure();
const per = (m: { heap: number; buffers: number }): string => `heap ${((m.heap - empty.heap - uidBytes) / PODS).toFixed(0)} B/pod, buffers ${((m.buffers - empty.buffers) / PODS).toFixed(0)} B/pod, total ${((m.heap + m.buffers - empty.heap - empty.buffers - uidBytes) / 1048576).toFixed(1)} MB`;
console.log(JSON.stringify({ pods: cache.size, columnBytes: cache.columnBytes }));
console.log(`after the fill:  ${per(full)}`);
console.log(`after the churn: ${per(churned)}`);
