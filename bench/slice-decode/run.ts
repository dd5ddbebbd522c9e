/**
 * The decode of one EndpointSlice watch event as the agent reads it (JSON.parse, then
 * viewSlice) against the same through the byte field mask (kube/json-mask.ts) that pays for
 * pods: a slice is mostly what the agent keeps (addresses, conditions, node, targetRef), so the
 * mask scans nearly every byte in JavaScript and saves little of the parse. The slice is shaped
 * as the stand-in's EndpointSlice controller writes it (test/apiserver/endpointslice-controller.ts),
 * plus a zone per endpoint. Printed: microseconds per event (median of `--rounds`) and MB/s.
 *
 *   node --import tsx --conditions=conndrain-source bench/slice-decode/run.ts [--endpoints 5,75,100] [--rounds 7]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { watchMasks } from '../../kube/watch-fields.js';
import type { FieldMask } from '../../src/field-mask.js';
import { viewSlice, type RawSlice } from '../../src/endpoints/slice-view.js';

const { values } = parseArgs({ options: { endpoints: { type: 'string', default: '5,75,100' }, rounds: { type: 'string', default: '7' } } });
const SIZES = values.endpoints.split(',').map(Number);
const ROUNDS = Number(values.rounds);

/** The fields the agent reads of a slice, as a mask (what the agent masked to before). */
const SLICE_MASK: FieldMask = {
  metadata: { name: true, namespace: true, resourceVersion: true, labels: { 'kubernetes.io/service-name': true, 'conndrain.io/flow-pinning': true } },
  addressType: true,
  ports: { name: true, port: true, protocol: true },
  endpoints: { addresses: true, conditions: true, nodeName: true, targetRef: { kind: true, name: true, namespace: true, uid: true } },
};

function sliceEvent(n: number): Buffer {
  const endpoints = Array.from({ length: n }, (_, i) => ({
    addresses: [`10.${i % 250}.${(i * 7) % 250}.${i % 200}`],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: `node-${1000 + i}`,
    targetRef: { kind: 'Pod', namespace: 'ns-12', name: `app-12-7d9f8c-${i}abcd`, uid: randomUUID() },
    zone: 'zone-a',
  }));
  const metadata = {
    name: 'svc-12-abcde', generateName: 'svc-12-', namespace: 'ns-12', uid: randomUUID(), resourceVersion: '123456789', generation: 12,
    creationTimestamp: '2026-12-01T00:00:00Z',
    labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': 'svc-12', app: 'svc-12' },
    annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-12-01T00:00:00Z' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'svc-12', uid: randomUUID(), controller: true, blockOwnerDeletion: true }],
  };
  const object = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata, addressType: 'IPv4', endpoints, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] };
  return Buffer.from(JSON.stringify({ type: 'MODIFIED', object }));
}

/** Median microseconds per call over `ROUNDS` rounds. */
function measure(fn: () => unknown, calls: number): number {
  for (let i = 0; i < calls; i++) fn();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    rounds.push(Number(process.hrtime.bigint() - t) / 1000 / calls);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(rounds.length / 2)] ?? 0;
}

const mask = watchMasks(SLICE_MASK).event;
const view = (text: string): unknown => viewSlice((JSON.parse(text) as { object: RawSlice }).object);
console.log(`bench/slice-decode: node ${process.version}, median of ${ROUNDS} rounds`);
console.log('endpoints  bytes   parse+view us (MB/s)   mask+parse+view us (MB/s)   mask / parse');
for (const n of SIZES) {
  const line = sliceEvent(n);
  const calls = Math.max(200, Math.round(4_000_000 / line.length));
  const whole = measure(() => view(line.toString('utf8')), calls);
  const masked = measure(() => view(mask.apply(line)), calls);
  const mbs = (us: number): string => (line.length / us).toFixed(0);
  console.log(`${String(n).padStart(9)}  ${String(line.length).padStart(5)}   ${whole.toFixed(1).padStart(8)} (${mbs(whole)})   ${masked.toFixed(1).padStart(14)} (${mbs(masked)})   ${(masked / whole).toFixed(2)}x`);
}
