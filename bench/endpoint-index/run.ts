/**
 * The endpoint index's memory per endpoint: every node keeps every endpoint of the cluster, so
 * this is what the agent grows by per pod. Fills an EndpointIndex from slices shaped like
 * bench/scale's (Deployment pod names, UUID uids, IPv4, 5,000 nodes, 75 endpoints a slice),
 * each parsed from JSON as the watch hands it over, then replaces a fraction of the endpoints
 * (new pods, new IPs) and flips the readiness of others; prints the V8 heap and ArrayBuffer bytes
 * above the empty index, after a full GC, per endpoint.
 *
 *   node --expose-gc --import tsx --conditions=conndrain-source bench/endpoint-index/run.ts [--pods 150000] [--per-slice 75]
 */
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { EndpointIndex } from '../../src/endpoints/endpoint-index.js';
import { viewSlice, type RawSlice } from '../../src/endpoints/slice-view.js';
import { podIp, podName, podUid } from '../scale/cluster.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '150000' }, 'per-slice': { type: 'string', default: '75' }, churn: { type: 'string', default: '0.2' } } });
const PODS = Number(values.pods);
const PER_SLICE = Number(values['per-slice']);
const SLICES = Math.ceil(PODS / PER_SLICE);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

/** Slice s as the watch hands it over (parsed from JSON: flat strings, as a real list's); `pod(k)` names its k-th pod. */
function sliceAt(s: number, pod: (k: number) => number, notServing = -1): RawSlice {
  const namespace = `ns-${s % 200}`;
  const raw: RawSlice = {
    metadata: { name: `svc-${s}-abcde`, namespace, labels: { 'kubernetes.io/service-name': `svc-${s}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: PER_SLICE }, (_, k) => {
      const i = pod(k);
      return {
        addresses: [podIp(i)],
        conditions: { ready: k !== notServing, serving: k !== notServing, terminating: false },
        nodeName: `node-${1 + (i % 4999)}`,
        targetRef: { kind: 'Pod', namespace, name: podName(i), uid: podUid(i) },
      };
    }),
  };
  return JSON.parse(JSON.stringify(raw)) as RawSlice;
}

function used(): { heap: number; buffers: number } {
  gc?.();
  gc?.();
  return { heap: getHeapStatistics().used_heap_size, buffers: process.memoryUsage().arrayBuffers };
}

const generation = new Int32Array(SLICES * PER_SLICE);
const podOf = (s: number) => (k: number): number => s * PER_SLICE + k + (generation[s * PER_SLICE + k] as number) * PODS;
const base = used();
const index = new EndpointIndex(() => true);
for (let s = 0; s < SLICES; s++) index.upsert(viewSlice(sliceAt(s, podOf(s))));
const listed = used();
// Churn: a fraction of the pods replaced (new name, uid and IP), each as a rewrite of its slice.
const replaced = Math.floor(PODS * Number(values.churn));
for (let n = 0; n < replaced; n++) {
  const at = Math.floor((n * 2654435761) % (SLICES * PER_SLICE));
  generation[at] = (generation[at] as number) + 1;
  const s = Math.floor(at / PER_SLICE);
  index.upsert(viewSlice(sliceAt(s, podOf(s))));
}
// Readiness flips: one endpoint of a slice not serving, then serving again.
const flips = 20_000;
for (let n = 0; n < flips; n++) {
  const s = (n * 7919) % SLICES;
  index.upsert(viewSlice(sliceAt(s, podOf(s), n % PER_SLICE)));
}
const churned = used();
const per = (b: number): string => (b / PODS).toFixed(0);
const mb = (b: number): string => (b / 1048576).toFixed(1);
console.log(`endpoint index: ${PODS} endpoints in ${SLICES} slices of ${PER_SLICE}, ${index.endpointCount} tracked`);
console.log(`after the list:  heap ${mb(listed.heap - base.heap)} MB + buffers ${mb(listed.buffers - base.buffers)} MB = ${per(listed.heap - base.heap + listed.buffers - base.buffers)} bytes an endpoint (${index.columnBytes} bytes of columns)`);
console.log(`after ${replaced} replaced and ${flips} flips: heap ${mb(churned.heap - base.heap)} MB + buffers ${mb(churned.buffers - base.buffers)} MB = ${per(churned.heap - base.heap + churned.buffers - base.buffers)} bytes an endpoint`);
