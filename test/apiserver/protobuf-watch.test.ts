/**
 * A slice watch whose client accepts `application/vnd.kubernetes.protobuf` (as a kube-proxy's)
 * gets protobuf frames as the real API server writes them: a 4-byte big-endian length, a
 * WatchEvent {type 1, object 2: RawExtension {raw 1}}, the raw `k8s\0` + runtime.Unknown
 * {typeMeta 1 {apiVersion 1, kind 2}, raw 2} holding an EndpointSlice or, for ERROR, a Status.
 * The frames are read here with a decoder of the test's own (a walk of the tags), not with
 * the stand-in's encoder, and compared with the JSON view of the same slices. A client
 * without that Accept, and a pod watch, still get JSON lines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { FakeApiServer, INITIAL_EVENTS_END, type JsonObject } from './server.js';
import { service } from './cluster-objects.js';
import { managedPod, setReady } from './pods.js';

const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf, application/json';
const NS = 'shop';
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;

// ---------------------------------------------------------------- a tiny protobuf reader

interface Field {
  n: number;
  /** A varint's value (wire type 0). */
  int?: bigint;
  /** A length-delimited field's bytes (wire type 2). */
  data?: Buffer;
}

/** Walks one message's tags (wire types 0 and 2 only, as these messages use). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      assert.ok(at < buf.length, 'truncated varint');
      const b = buf[at++] as number;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const n = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ n, int: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      assert.ok(at + len <= buf.length, `field ${n} runs past its message`);
      out.push({ n, data: buf.subarray(at, at + len) });
      at += len;
    } else assert.fail(`unexpected wire type ${wire} (field ${n})`);
  }
  return out;
}

const all = (fs: Field[], n: number): Buffer[] => fs.filter((f) => f.n === n).map((f) => f.data ?? assert.fail(`field ${n} is not length-delimited`));
const bytesOf = (fs: Field[], n: number): Buffer | undefined => all(fs, n)[0];
const str = (fs: Field[], n: number): string | undefined => bytesOf(fs, n)?.toString('utf8');
const int = (fs: Field[], n: number): number | undefined => {
  const f = fs.find((x) => x.n === n);
  return f?.int === undefined ? undefined : Number(BigInt.asIntN(64, f.int));
};
const bool = (fs: Field[], n: number): boolean | undefined => (int(fs, n) === undefined ? undefined : int(fs, n) === 1);

interface Decoded {
  type: string;
  apiVersion: string;
  kind: string;
  /** The object's message (EndpointSlice or Status). */
  object: Field[];
}

/** One frame's WatchEvent, its envelope opened. */
function decodeEvent(event: Buffer): Decoded {
  const ev = fields(event);
  const raw = bytesOf(fields(bytesOf(ev, 2) ?? assert.fail('no object')), 1) ?? assert.fail('no raw');
  assert.deepEqual([...raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'the k8s\\0 magic');
  const unknown = fields(raw.subarray(4));
  const typeMeta = fields(bytesOf(unknown, 1) ?? assert.fail('no typeMeta'));
  return { type: str(ev, 1) ?? '', apiVersion: str(typeMeta, 1) ?? '', kind: str(typeMeta, 2) ?? '', object: fields(bytesOf(unknown, 2) ?? assert.fail('no raw object')) };
}

interface SliceView {
  name: string;
  resourceVersion: string;
  annotations: Record<string, string>;
  addressType: string;
  endpoints: Array<{ address: string; pod: string; conditions: { ready?: boolean; serving?: boolean; terminating?: boolean } }>;
}

function decodeSlice(slice: Field[]): SliceView {
  const meta = fields(bytesOf(slice, 1) ?? assert.fail('no metadata'));
  const annotations: Record<string, string> = {};
  for (const entry of all(meta, 12)) {
    const e = fields(entry);
    annotations[str(e, 1) ?? ''] = str(e, 2) ?? '';
  }
  return {
    name: str(meta, 1) ?? '',
    resourceVersion: str(meta, 6) ?? '',
    annotations,
    addressType: str(slice, 4) ?? '',
    endpoints: all(slice, 2).map((raw) => {
      const ep = fields(raw);
      const c = fields(bytesOf(ep, 2) ?? assert.fail('no conditions'));
      const ref = fields(bytesOf(ep, 4) ?? assert.fail('no targetRef'));
      return { address: str(ep, 1) ?? '', pod: str(ref, 3) ?? '', conditions: { ready: bool(c, 1), serving: bool(c, 2), terminating: bool(c, 3) } };
    }),
  };
}

/** The same view of a slice's JSON. */
function jsonSlice(o: JsonObject): SliceView {
  const s = o as unknown as { metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> }; addressType: string; endpoints: Array<{ addresses: string[]; targetRef: { name: string }; conditions: SliceView['endpoints'][number]['conditions'] }> | null };
  return {
    name: s.metadata.name,
    resourceVersion: s.metadata.resourceVersion,
    annotations: s.metadata.annotations ?? {},
    addressType: s.addressType,
    endpoints: (s.endpoints ?? []).map((e) => ({ address: e.addresses[0] ?? '', pod: e.targetRef.name, conditions: e.conditions })),
  };
}

// ---------------------------------------------------------------- a watch client

interface WatchClient {
  res: IncomingMessage;
  /** Bytes received so far. */
  received(): number;
  /** The next protobuf frame's payload (the WatchEvent). */
  frame(): Promise<Buffer>;
  /** The next JSON line, parsed. */
  line(): Promise<{ type: string; object: JsonObject }>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

function openWatch(url: string, accept?: string): Promise<WatchClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'user-agent': 'protobuf-test', ...(accept === undefined ? {} : { accept }) } }, (res) => {
      let buf = Buffer.alloc(0);
      let total = 0;
      let wake: (() => void) | undefined;
      let done = false;
      const ended = new Promise<void>((r) => res.on('end', () => r()));
      res.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        total += c.length;
        wake?.();
      });
      res.on('end', () => {
        done = true;
        wake?.();
      });
      const waitFor = async <T>(take: () => T | undefined): Promise<T> => {
        for (;;) {
          const got = take();
          if (got !== undefined) return got;
          if (done) throw new Error('the watch ended');
          await new Promise<void>((r, fail) => {
            const timer = setTimeout(() => fail(new Error('no event within 5 s')), 5000);
            wake = () => {
              clearTimeout(timer);
              wake = undefined;
              r();
            };
          });
        }
      };
      resolve({
        res,
        received: () => total,
        ended,
        frame: () =>
          waitFor(() => {
            if (buf.length < 4) return undefined;
            const len = buf.readUInt32BE(0);
            if (buf.length < 4 + len) return undefined;
            const payload = buf.subarray(4, 4 + len);
            buf = buf.subarray(4 + len);
            return payload;
          }),
        line: () =>
          waitFor(() => {
            const nl = buf.indexOf(0x0a);
            if (nl < 0) return undefined;
            const text = buf.subarray(0, nl).toString('utf8');
            buf = buf.subarray(nl + 1);
            return JSON.parse(text) as { type: string; object: JsonObject };
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function getJson(url: string): Promise<JsonObject & { items: JsonObject[] }> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return (await res.json()) as JsonObject & { items: JsonObject[] };
}

async function standIn(): Promise<FakeApiServer> {
  const api = new FakeApiServer();
  for (let i = 0; i < 3; i++) api.putPod(managedPod({ name: `web-${i}`, namespace: NS, nodeName: 'node-a', ips: [`10.1.0.${i + 10}`], app: 'web' }));
  api.putService(service({ name: 'web', namespace: NS, selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] }));
  await api.start();
  return api;
}

// ---------------------------------------------------------------- the tests

test('a slice watch accepting protobuf gets protobuf frames: MODIFIED as the JSON view, BOOKMARK, bytes counted, 410 as an ERROR Status', async () => {
  const api = await standIn();
  try {
    const list = await getJson(`${api.url}${SLICES}`);
    const listRv = String((list.metadata as { resourceVersion: string }).resourceVersion);
    assert.equal(list.items.length, 1);
    const w = await openWatch(`${api.url}${SLICES}?watch=true&allowWatchBookmarks=true&resourceVersion=${listRv}`, PROTOBUF_ACCEPT);
    assert.equal(w.res.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');

    api.modifyPod(NS, 'web-1', (p) => setReady(p, false));
    const modified = decodeEvent(await w.frame());
    assert.equal(modified.type, 'MODIFIED');
    assert.equal(modified.apiVersion, 'discovery.k8s.io/v1');
    assert.equal(modified.kind, 'EndpointSlice');
    const got = decodeSlice(modified.object);
    const [json] = (await getJson(`${api.url}${SLICES}`)).items;
    assert.ok(json !== undefined);
    assert.deepEqual(got, jsonSlice(json), 'the protobuf slice says what the JSON view of it says');
    assert.equal(got.resourceVersion, String(api.resourceVersion));
    assert.equal(got.addressType, 'IPv4');
    const flipped = got.endpoints.find((e) => e.pod === 'web-1');
    assert.deepEqual(flipped, { address: '10.1.0.11', pod: 'web-1', conditions: { ready: false, serving: false, terminating: false } });
    assert.deepEqual(got.endpoints.find((e) => e.pod === 'web-0')?.conditions, { ready: true, serving: true, terminating: false });

    api.sendBookmarks();
    const bookmark = decodeEvent(await w.frame());
    assert.equal(bookmark.type, 'BOOKMARK');
    assert.equal(bookmark.kind, 'EndpointSlice');
    assert.deepEqual(decodeSlice(bookmark.object), { name: '', resourceVersion: String(api.resourceVersion), annotations: {}, addressType: '', endpoints: [] });

    const stats = api.openWatchStats().find((s) => s.client === 'protobuf-test');
    assert.equal(stats?.bytes, w.received(), 'the bytes counted are the frames sent');

    api.expireResourceVersions();
    const expired = decodeEvent(await w.frame());
    assert.equal(expired.type, 'ERROR');
    assert.deepEqual([expired.apiVersion, expired.kind], ['v1', 'Status']);
    assert.equal(str(expired.object, 2), 'Failure');
    assert.equal(str(expired.object, 4), 'Expired');
    assert.equal(int(expired.object, 6), 410);
    await w.ended;

    // Watching again from the old resourceVersion: 410 at once, as an ERROR frame.
    const again = await openWatch(`${api.url}${SLICES}?watch=true&resourceVersion=${listRv}`, PROTOBUF_ACCEPT);
    assert.equal(again.res.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');
    const gone = decodeEvent(await again.frame());
    assert.equal(gone.type, 'ERROR');
    assert.equal(gone.kind, 'Status');
    assert.equal(int(gone.object, 6), 410);
    assert.match(str(gone.object, 3) ?? '', /too old resource version/);
    await again.ended;
    assert.equal((api.bytesSent().byClient['protobuf-test']?.endpointslices?.watch ?? 0), w.received() + again.received());
  } finally {
    await api.close();
  }
});

test('a streaming list of slices in protobuf: ADDED frames, then the end bookmark with its annotation', async () => {
  const api = await standIn();
  try {
    const w = await openWatch(`${api.url}${SLICES}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=`, PROTOBUF_ACCEPT);
    assert.equal(w.res.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');
    const added = decodeEvent(await w.frame());
    assert.equal(added.type, 'ADDED');
    assert.deepEqual(decodeSlice(added.object), jsonSlice(api.listEndpointSlices()[0] as JsonObject));
    const end = decodeEvent(await w.frame());
    assert.equal(end.type, 'BOOKMARK');
    assert.deepEqual(decodeSlice(end.object).annotations, { [INITIAL_EVENTS_END]: 'true' });
    assert.equal(decodeSlice(end.object).resourceVersion, String(api.resourceVersion));
    w.close();
  } finally {
    await api.close();
  }
});

test('without the protobuf Accept, and for pods, a watch stays JSON lines', async () => {
  const api = await standIn();
  try {
    const rv = api.resourceVersion;
    const slices = await openWatch(`${api.url}${SLICES}?watch=true&resourceVersion=${rv}`);
    const pods = await openWatch(`${api.url}/api/v1/namespaces/${NS}/pods?watch=true&resourceVersion=${rv}`, PROTOBUF_ACCEPT);
    assert.equal(slices.res.headers['content-type'], 'application/json');
    assert.equal(pods.res.headers['content-type'], 'application/json');
    api.modifyPod(NS, 'web-2', (p) => setReady(p, false));
    const sliceEvent = await slices.line();
    assert.equal(sliceEvent.type, 'MODIFIED');
    assert.equal(sliceEvent.object.kind, 'EndpointSlice');
    assert.deepEqual(jsonSlice(sliceEvent.object).endpoints.find((e) => e.pod === 'web-2')?.conditions, { ready: false, serving: false, terminating: false });
    const podEvent = await pods.line();
    assert.equal(podEvent.type, 'MODIFIED');
    assert.equal(podEvent.object.metadata?.name, 'web-2');
    slices.close();
    pods.close();
  } finally {
    await api.close();
  }
});
