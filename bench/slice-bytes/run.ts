/**
 * The bytes of the same EndpointSlices as JSON (what the API stand-in, test/apiserver, sends
 * by default, and bench/scale's kube-proxy gets for its list) and as protobuf (what a real
 * kube-apiserver sends a kube-proxy, whose `--kube-api-content-type` is
 * `application/vnd.kubernetes.protobuf`; the stand-in sends it too on a slice watch that asks
 * for it, as bench/scale's kube-proxy's does), so bench/scale's comparison of the agent's API
 * bytes with a kube-proxy's can be read for a real cluster. The slices are the stand-in's own: its EndpointSlice controller
 * (test/apiserver/endpointslice-controller.ts) writes them from bench/scale's pods and
 * Services (bench/scale/cluster.ts, services.ts; the pods as bench/scale/api-child.ts makes
 * them), SERVICES Services of 5, 75 or 100 pods each. Measured, per case:
 *
 * - a watch event: JSON, the stand-in's line `{"type":"MODIFIED","object":<slice>}\n`;
 *   protobuf, as the API server frames it (apiserver endpoints/handlers/response.go
 *   watchEncoder.doEncode): a 4-byte big-endian length (apimachinery pkg/util/framer), then a
 *   metav1.WatchEvent {type, object: RawExtension {raw}} encoded raw (the protobuf
 *   StreamSerializer), its raw being the slice as the protobuf Serializer encodes an object:
 *   `k8s\0` then a runtime.Unknown {typeMeta {apiVersion, kind}, raw: the EndpointSlice
 *   message, contentEncoding "", contentType ""};
 * - a list item: the slice in an EndpointSliceList (JSON with its separating comma; protobuf as
 *   field 2 of the list message: tag, length, message);
 * - a readiness flip: the 75-endpoint slice's MODIFIED event after one pod turned unready;
 * - the full list of SERVICES slices of 75 endpoints (bench/scale at 150,000 pods): JSON as the
 *   stand-in serves it (checked against a GET of its own, kube-proxy's label selector), protobuf
 *   as `k8s\0` + Unknown {EndpointSliceList {ListMeta, items}}.
 *
 * The protobuf is written by test/apiserver/protobuf.ts (the encoder the stand-in's protobuf
 * slice watches use; its header has the field numbers and how it follows the Go code): a slice
 * is encoded from the stand-in's JSON field by field, a field the encoder does not know fails
 * the run, so both sides always carry the same content. A self-check here decodes every
 * protobuf written (a walk of the tags) and compares the endpoint count, every endpoint's
 * address, uid and conditions and the resourceVersion with the JSON, so an encoding mistake
 * fails loudly.
 *
 * Not measured: HTTP chunk framing (neither side counts it), and gzip as a whole-list figure
 * only (a real API server gzips a response whose first write is over 128 KiB, level 1, when the
 * client accepts gzip, as client-go does by default; a plain watch is not compressed, and only
 * the newest apiserver code, endpoints/handlers/watch.go, gzips a streaming list's watch,
 * sendInitialEvents, per flush).
 *
 * About 25 s and 0.9 GB of memory (the stand-in holds bench/scale's 150,000 pods for the list):
 *
 *   node --import tsx --conditions=conndrain-source bench/slice-bytes/run.ts
 */
import { get } from 'node:http';
import { gzipSync } from 'node:zlib';
import { setReady, managedPod } from '../../test/apiserver/pods.js';
import { RESOURCES } from '../../test/apiserver/resources.js';
import { FakeApiServer, type JsonObject } from '../../test/apiserver/server.js';
import { encodeEndpointSlice, envelope, MAGIC, Message, watchFrame, WIRE_LEN, WIRE_VARINT } from '../../test/apiserver/protobuf.js';
import { SERVICES, podDrainId, podIp, podName, podNamespace, podNode, podUid } from '../scale/cluster.js';
import { KUBE_PROXY_SLICE_SELECTOR } from '../scale/kube-proxy-client.js';
import { appOf, putServices, serviceName } from '../scale/services.js';

/** The Service whose slice the single-slice cases measure (`svc-1234` in `ns-34`: a 4-character index, as half of bench/scale's are). */
const SERVICE = 1234;
/** The endpoint of the 75-endpoint slice the readiness flip turns unready. */
const FLIPPED = 37;
const LIST_ENDPOINTS = 75;

// ---------------------------------------------------------------- protobuf writing (test/apiserver/protobuf.ts)

const API_VERSION = RESOURCES.endpointslices.apiVersion;

/** A watch event as the API server writes it for protobuf: the length-delimited frame of a raw-encoded WatchEvent. */
function protoWatchEvent(type: string, slice: JsonObject): Buffer {
  return watchFrame(type, envelope(API_VERSION, 'EndpointSlice', encodeEndpointSlice(slice)));
}

/** A slice as an item of EndpointSliceList: field 2's tag, the length, the message. */
function protoListItem(slice: JsonObject): Buffer {
  return new Message().bytes(2, encodeEndpointSlice(slice)).finish();
}

/** The EndpointSliceList a GET returns (ListMeta's strings always written: selfLink, resourceVersion, continue). */
function protoList(resourceVersion: string, slices: JsonObject[]): Buffer {
  const list = new Message().message(1, new Message().string(1, '').string(2, resourceVersion).string(3, ''));
  for (const s of slices) list.bytes(2, encodeEndpointSlice(s));
  return envelope(API_VERSION, RESOURCES.endpointslices.listKind, list.finish());
}

// ---------------------------------------------------------------- JSON, as the stand-in sends it (test/apiserver/server.ts)

/** `eventLine`: one line per watch event. */
const jsonWatchEvent = (type: string, slice: JsonObject): string => `${JSON.stringify({ type, object: slice })}\n`;

/** `serveList`: the head with the list's metadata, the items joined by commas, `]}`. */
function jsonList(resourceVersion: string, slices: JsonObject[]): string {
  const { listKind, apiVersion } = RESOURCES.endpointslices;
  return `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify({ resourceVersion })},"items":[${slices.map((s) => JSON.stringify(s)).join(',')}]}`;
}

// ---------------------------------------------------------------- protobuf reading (the self-check)

interface Field {
  field: number;
  wire: number;
  int: bigint;
  data: Buffer;
}

/** Walks one message's tags; throws on a truncated field, a group or an unknown wire type. */
function readFields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const readVarint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length) throw new Error('protobuf check: truncated varint');
      const b = buf[at++] as number;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      if (shift > 63n) throw new Error('protobuf check: varint over 10 bytes');
    }
  };
  while (at < buf.length) {
    const key = Number(readVarint());
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 0) throw new Error('protobuf check: field number 0');
    if (wire === WIRE_VARINT) out.push({ field, wire, int: readVarint(), data: Buffer.alloc(0) });
    else if (wire === WIRE_LEN) {
      const n = Number(readVarint());
      if (at + n > buf.length) throw new Error(`protobuf check: field ${field} runs past its message`);
      out.push({ field, wire, int: 0n, data: buf.subarray(at, at + n) });
      at += n;
    } else throw new Error(`protobuf check: unexpected wire type ${wire} (field ${field})`);
  }
  return out;
}

function one(fields: Field[], n: number, wire = WIRE_LEN): Field {
  const found = fields.filter((f) => f.field === n);
  if (found.length !== 1) throw new Error(`protobuf check: field ${n} found ${found.length} times`);
  const f = found[0] as Field;
  if (f.wire !== wire) throw new Error(`protobuf check: field ${n} has wire type ${f.wire}, not ${wire}`);
  return f;
}

const all = (fields: Field[], n: number): Field[] => fields.filter((f) => f.field === n);
const text = (fields: Field[], n: number): string => one(fields, n).data.toString('utf8');
const flag = (fields: Field[], n: number): boolean => one(fields, n, WIRE_VARINT).int === 1n;

function expectEqual(what: string, got: unknown, want: unknown): void {
  if (got !== want) throw new Error(`protobuf check: ${what} is ${String(got)}, expected ${String(want)}`);
}

/** Unwraps `k8s\0` + Unknown, checking its type and empty content fields; returns its raw. */
function openEnvelope(data: Buffer, kind: string): Buffer {
  expectEqual('magic', data.subarray(0, 4).toString('hex'), MAGIC.toString('hex'));
  const unknown = readFields(data.subarray(4));
  const typeMeta = readFields(one(unknown, 1).data);
  expectEqual('Unknown apiVersion', text(typeMeta, 1), API_VERSION);
  expectEqual('Unknown kind', text(typeMeta, 2), kind);
  expectEqual('Unknown contentEncoding', text(unknown, 3), '');
  expectEqual('Unknown contentType', text(unknown, 4), '');
  return one(unknown, 2).data;
}

interface SliceJson {
  metadata: { name: string; resourceVersion: string; creationTimestamp: string };
  addressType: string;
  endpoints: Array<{ addresses: string[]; conditions: { ready: boolean; serving: boolean; terminating: boolean }; nodeName?: string; targetRef: { uid: string; name: string } }>;
}

/** Decodes an EndpointSlice message and compares what matters with its JSON. */
function checkSlice(data: Buffer, json: JsonObject): void {
  const want = json as unknown as SliceJson;
  const slice = readFields(data);
  const meta = readFields(one(slice, 1).data);
  expectEqual('metadata.name', text(meta, 1), want.metadata.name);
  expectEqual('metadata.resourceVersion', text(meta, 6), want.metadata.resourceVersion);
  expectEqual('metadata.selfLink', text(meta, 4), '');
  expectEqual('metadata.generation', one(meta, 7, WIRE_VARINT).int, 0n);
  const created = readFields(one(meta, 8).data);
  expectEqual('creationTimestamp.seconds', Number(one(created, 1, WIRE_VARINT).int), Math.floor(Date.parse(want.metadata.creationTimestamp) / 1000));
  expectEqual('addressType', text(slice, 4), want.addressType);
  const endpoints = all(slice, 2);
  expectEqual('endpoint count', endpoints.length, want.endpoints.length);
  endpoints.forEach((e, i) => {
    const w = want.endpoints[i]!;
    const ep = readFields(e.data);
    expectEqual(`endpoint ${i} address`, text(ep, 1), w.addresses[0]);
    const ref = readFields(one(ep, 4).data);
    expectEqual(`endpoint ${i} targetRef.uid`, text(ref, 4), w.targetRef.uid);
    expectEqual(`endpoint ${i} targetRef.name`, text(ref, 3), w.targetRef.name);
    const c = readFields(one(ep, 2).data);
    expectEqual(`endpoint ${i} ready`, flag(c, 1), w.conditions.ready);
    expectEqual(`endpoint ${i} serving`, flag(c, 2), w.conditions.serving);
    expectEqual(`endpoint ${i} terminating`, flag(c, 3), w.conditions.terminating);
    if (w.nodeName !== undefined) expectEqual(`endpoint ${i} nodeName`, text(ep, 6), w.nodeName);
  });
}

function checkWatchEvent(frame: Buffer, type: string, json: JsonObject): void {
  expectEqual('frame length', frame.readUInt32BE(0), frame.length - 4);
  const event = readFields(frame.subarray(4));
  expectEqual('WatchEvent type', text(event, 1), type);
  const raw = one(readFields(one(event, 2).data), 1).data;
  checkSlice(openEnvelope(raw, 'EndpointSlice'), json);
}

function checkList(body: Buffer, resourceVersion: string, slices: JsonObject[]): void {
  const list = readFields(openEnvelope(body, RESOURCES.endpointslices.listKind));
  const listMeta = readFields(one(list, 1).data);
  expectEqual('ListMeta.resourceVersion', text(listMeta, 2), resourceVersion);
  const items = all(list, 2);
  expectEqual('item count', items.length, slices.length);
  items.forEach((item, i) => checkSlice(item.data, slices[i]!));
}

/** Known answers from the protobuf encoding guide, and Go's 10-byte negative int64. */
function checkEncoder(): void {
  expectEqual('varint 150', new Message().int(1, 150).finish().toString('hex'), '089601');
  expectEqual('string "testing"', new Message().string(2, 'testing').finish().toString('hex'), '120774657374696e67');
  expectEqual('int64 -1', new Message().int(1, -1).finish().toString('hex'), '08ffffffffffffffffff01');
  expectEqual('map entry', new Message().map(11, { a: 'b' }).finish().toString('hex'), '5a060a0161120162');
}

// ---------------------------------------------------------------- the slices

/** bench/scale's pod at place `place` of `pods` (api-child.ts's smallPod, generation 0), its Service one of SERVICES. */
function benchPod(place: number, pods: number): JsonObject {
  const app = appOf(place, SERVICES);
  return managedPod({ name: podName(place), namespace: podNamespace(place), nodeName: podNode(place, pods), ips: [podIp(place)], uid: podUid(place), drainId: podDrainId(place), ready: true, ...(app === undefined ? {} : { app }) });
}

/**
 * A stand-in (not listening yet) with bench/scale's SERVICES Services of `perService` pods
 * each: every pod (`only` undefined) or only those of Service `only`, the others keeping their
 * placeholder slice. Pods go in first, as bench/scale does (each slice written once).
 */
function standIn(perService: number, only?: number): FakeApiServer {
  const pods = perService * SERVICES;
  const api = new FakeApiServer();
  for (let place = only ?? 0; place < pods; place += only === undefined ? 1 : SERVICES) api.putPod(benchPod(place, pods));
  putServices(api, SERVICES);
  return api;
}

function sliceOf(api: FakeApiServer, s: number): JsonObject {
  const found = api.listEndpointSlices().filter((x) => x.metadata?.labels?.['kubernetes.io/service-name'] === serviceName(s));
  if (found.length !== 1) throw new Error(`${found.length} slices for ${serviceName(s)}`);
  return found[0] as JsonObject;
}

const endpointsOf = (slice: JsonObject): number => (slice.endpoints as unknown[] | null)?.length ?? 0;

/** GETs `url`; the body. */
async function httpGet(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Opens the watch `url`, runs `act` once its response has begun, returns the first event line. */
function firstWatchLine(url: string, act: () => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        const received = Buffer.concat(chunks);
        const nl = received.indexOf(0x0a);
        if (nl >= 0) {
          req.destroy();
          resolve(received.subarray(0, nl + 1));
        }
      });
      act();
    });
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------- the run

interface Row {
  name: string;
  json: number;
  proto: number;
}

checkEncoder();
const rows: Row[] = [];
const event = (slice: JsonObject): { json: number; proto: number } => {
  const proto = protoWatchEvent('MODIFIED', slice);
  checkWatchEvent(proto, 'MODIFIED', slice);
  return { json: Buffer.byteLength(jsonWatchEvent('MODIFIED', slice)), proto: proto.length };
};
const item = (slice: JsonObject): { json: number; proto: number } => {
  const proto = protoListItem(slice);
  checkSlice(one(readFields(proto), 2).data, slice);
  return { json: Buffer.byteLength(JSON.stringify(slice)) + 1, proto: proto.length };
};

const perEndpoint: Record<number, { json: number; proto: number }> = {};
for (const size of [5, 100]) {
  const slice = sliceOf(standIn(size, SERVICE), SERVICE);
  expectEqual(`endpoints of the ${size}-endpoint slice`, endpointsOf(slice), size);
  const e = event(slice);
  perEndpoint[size] = e;
  rows.push({ name: `slice of ${size}: MODIFIED watch event`, ...e }, { name: `slice of ${size}: list item`, ...item(slice) });
}

// The 2,000 x 75 cluster: the 75-endpoint slice, its readiness flip, the full list.
const api = standIn(LIST_ENDPOINTS);
await api.start();
try {
  const slice = sliceOf(api, SERVICE);
  expectEqual('endpoints of the 75-endpoint slice', endpointsOf(slice), LIST_ENDPOINTS);
  rows.splice(2, 0, { name: `slice of ${LIST_ENDPOINTS}: MODIFIED watch event`, ...event(slice) }, { name: `slice of ${LIST_ENDPOINTS}: list item`, ...item(slice) });

  const slices = api.listEndpointSlices();
  expectEqual('slices', slices.length, SERVICES);
  for (const s of slices) expectEqual(`endpoints of ${s.metadata?.name}`, endpointsOf(s), LIST_ENDPOINTS);
  const listPath = `/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${encodeURIComponent(KUBE_PROXY_SLICE_SELECTOR)}&resourceVersion=0`;
  const served = await httpGet(`${api.url}${listPath}`);
  const rv = String(api.resourceVersion);
  const json = jsonList(rv, slices);
  if (!served.equals(Buffer.from(json))) throw new Error(`the stand-in served a list of ${served.length} bytes, this file builds ${Buffer.byteLength(json)}`);
  const protoBody = protoList(rv, slices);
  checkList(protoBody, rv, slices);
  const listRow: Row = { name: `list of ${SERVICES.toLocaleString('en-US')} slices of ${LIST_ENDPOINTS}`, json: served.length, proto: protoBody.length };

  // The flip: the pod behind endpoint FLIPPED turns unready; the watch's MODIFIED as the stand-in sends it.
  const ref = (slice as unknown as SliceJson).endpoints[FLIPPED]!.targetRef;
  const namespace = slice.metadata?.namespace ?? '';
  const line = await firstWatchLine(`${api.url}/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?watch=true&resourceVersion=${api.resourceVersion}`, () => {
    api.modifyPod(namespace, ref.name, (p) => setReady(p, false));
  });
  const flipped = sliceOf(api, SERVICE);
  const flippedEndpoint = (flipped as unknown as SliceJson).endpoints[FLIPPED]!;
  expectEqual('flipped endpoint ready', flippedEndpoint.conditions.ready, false);
  const flip = event(flipped);
  if (!line.equals(Buffer.from(jsonWatchEvent('MODIFIED', flipped)))) throw new Error(`the stand-in's MODIFIED (${line.length} bytes) is not this file's (${flip.json})`);
  rows.push({ name: `readiness flip, slice of ${LIST_ENDPOINTS}: MODIFIED event`, ...flip }, listRow);

  const per = (k: 'json' | 'proto'): number => ((perEndpoint[100]?.[k] ?? 0) - (perEndpoint[5]?.[k] ?? 0)) / 95;
  rows.push({ name: 'one endpoint more ((event 100 - event 5) / 95)', json: per('json'), proto: per('proto') });

  const fmt = (n: number): string => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toFixed(1));
  const width = Math.max(...rows.map((r) => r.name.length));
  console.log(`EndpointSlices of bench/scale (${serviceName(SERVICE)}, ${namespace}); bytes sent per case (protobuf checked by decoding)\n`);
  console.log(`${'case'.padEnd(width)}  ${'JSON'.padStart(12)}  ${'protobuf'.padStart(12)}  ${'JSON/proto'.padStart(10)}`);
  for (const r of rows) console.log(`${r.name.padEnd(width)}  ${fmt(r.json).padStart(12)}  ${fmt(r.proto).padStart(12)}  ${(r.json / r.proto).toFixed(2).padStart(10)}`);
  const gz = (b: Buffer): number => gzipSync(b, { level: 1 }).length;
  console.log(`\nThe list gzipped (level 1, as an API server compresses a response over 128 KiB for a client accepting gzip; Node's zlib, not Go's): JSON ${fmt(gz(served))}, protobuf ${fmt(gz(protoBody))} (${(gz(served) / gz(protoBody)).toFixed(2)}x)`);
} finally {
  await api.close();
}
