/**
 * A slice list whose client accepts `application/vnd.kubernetes.protobuf` (a kube-proxy's, the
 * agent's) is answered in protobuf as the real API server answers it (`k8s\0` + runtime.Unknown
 * {EndpointSliceList}), gzipped over the server's threshold, its bytes counted as sent. Read
 * back with the agent's decoder (kube/protobuf/list.ts), it says what the JSON list says. Pods
 * stay JSON whatever the client accepts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { ProtobufListDecoder } from '../../kube/protobuf/list.js';
import type { LazyEndpointSlice } from '../../kube/protobuf/lazy-endpointslice.js';
import { service } from './cluster-objects.js';
import { managedPod } from './pods.js';
import { FakeApiServer, type JsonObject } from './server.js';

const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf, application/json';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';

function get(url: string, accept: string, gzip: boolean): Promise<{ type: string; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'user-agent': 'list-test', accept, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ type: String(res.headers['content-type']), encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The fields the agent reads of a slice, from its JSON or its decoded protobuf. */
function readFields(s: JsonObject | LazyEndpointSlice): unknown {
  const o = JSON.parse(JSON.stringify(s)) as { metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> }; addressType?: string; ports?: unknown[]; endpoints?: Array<{ addresses: string[]; conditions?: unknown; nodeName?: string; targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string } }> | null };
  return {
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion, labels: o.metadata.labels ?? {} },
    addressType: o.addressType, ports: o.ports,
    endpoints: (o.endpoints ?? []).map((e) => ({ addresses: e.addresses, conditions: e.conditions, nodeName: e.nodeName, targetRef: { kind: e.targetRef?.kind, name: e.targetRef?.name, namespace: e.targetRef?.namespace, uid: e.targetRef?.uid } })),
  };
}

function decodeList(body: Buffer): { items: LazyEndpointSlice[]; resourceVersion: string | undefined } {
  const items: LazyEndpointSlice[] = [];
  const d = new ProtobufListDecoder((item) => items.push(item));
  d.write(body);
  return { items, resourceVersion: d.end().resourceVersion };
}

test('a slice list accepting protobuf: protobuf as the JSON list says it, gzipped when large, bytes counted as sent; pods stay JSON', async () => {
  const api = new FakeApiServer();
  for (let s = 0; s < 40; s++) {
    for (let i = 0; i < 40; i++) api.putPod(managedPod({ name: `web${s}-${i}`, namespace: 'shop', nodeName: `node-${i % 4}`, ips: [`10.${s}.0.${i + 10}`], app: `web${s}` }));
    api.putService(service({ name: `web${s}`, namespace: 'shop', selector: { app: `web${s}` }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] }));
  }
  await api.start();
  try {
    const json = JSON.parse((await get(`${api.url}${SLICES}?resourceVersion=0`, 'application/json', false)).body.toString('utf8')) as { metadata: { resourceVersion: string }; items: JsonObject[] };
    assert.equal(json.items.length, 40);

    const plain = await get(`${api.url}${SLICES}?resourceVersion=0`, PROTOBUF_ACCEPT, false);
    assert.equal(plain.type, 'application/vnd.kubernetes.protobuf');
    assert.equal(plain.encoding, undefined);
    const decoded = decodeList(plain.body);
    assert.equal(decoded.resourceVersion, json.metadata.resourceVersion);
    assert.deepEqual(decoded.items.map(readFields), json.items.map(readFields));
    assert.ok(plain.body.length > 128 * 1024, `the list is ${plain.body.length} bytes`);

    const before = api.bytesSent().byClient['list-test']?.endpointslices?.list ?? 0;
    const zipped = await get(`${api.url}${SLICES}?resourceVersion=0`, PROTOBUF_ACCEPT, true);
    assert.equal(zipped.encoding, 'gzip');
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
    assert.equal((api.bytesSent().byClient['list-test']?.endpointslices?.list ?? 0) - before, zipped.body.length, 'the compressed bytes are counted');

    const pods = await get(`${api.url}/api/v1/pods?resourceVersion=0`, PROTOBUF_ACCEPT, false);
    assert.equal(pods.type, 'application/json');
  } finally {
    await api.close();
  }
});
