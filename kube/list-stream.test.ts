/**
 * streamList asks for gzip as client-go does and inflates the body as it arrives; a broken
 * gzip body or an encoding it did not ask for is a clear error, never a partial list. With
 * `protobuf` it asks for protobuf first and reads what the server answers.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { encodeEndpointSlice, encodeList } from '../test/apiserver/protobuf.js';
import type { KubeConnection } from './connection.js';
import { streamList } from './list-stream.js';
import { LazyEndpointSlice } from './protobuf/lazy-endpointslice.js';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ conn: KubeConnection; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const conn: KubeConnection = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }), applyToFetchOptions: () => Promise.resolve({}) };
  return { conn, close: () => new Promise((r) => server.close(() => r())) };
}

const ITEMS = Array.from({ length: 3_000 }, (_, i) => ({ metadata: { name: `slice-${i}`, resourceVersion: String(i) }, endpoints: [{ addresses: [`10.0.${i >> 8}.${i & 255}`] }] }));
const BODY = JSON.stringify({ kind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1', metadata: { resourceVersion: '42' }, items: ITEMS });

/** Writes `bytes` in pieces of `size`, one per turn of the event loop, then ends the answer. */
function writeInPieces(res: ServerResponse, bytes: Buffer, size: number): void {
  let at = 0;
  const step = (): void => {
    if (at >= bytes.length) {
      res.end();
      return;
    }
    res.write(bytes.subarray(at, at + size));
    at += size;
    setImmediate(step);
  };
  step();
}

test('a gzipped list (asked with Accept-Encoding: gzip) arrives item by item, inflated across chunks', async () => {
  let asked = '';
  const gz = gzipSync(BODY, { level: 1 });
  const { conn, close } = await serve((req, res) => {
    asked = String(req.headers['accept-encoding']);
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    // In small pieces: the inflater sees chunk boundaries everywhere.
    writeInPieces(res, gz, 997);
  });
  try {
    const names: string[] = [];
    const meta = await streamList(conn, '/apis/discovery.k8s.io/v1/endpointslices', {}, (item) => names.push((item as { metadata: { name: string } }).metadata.name));
    assert.equal(asked, 'gzip');
    assert.equal(meta.resourceVersion, '42');
    assert.deepEqual(names, ITEMS.map((s) => s.metadata.name));
  } finally {
    await close();
  }
});

test('a plain answer to a client that asked gzip is read as before', async () => {
  const { conn, close } = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BODY);
  });
  try {
    let n = 0;
    const meta = await streamList(conn, '/x', {}, () => n++);
    assert.equal(meta.resourceVersion, '42');
    assert.equal(n, ITEMS.length);
  } finally {
    await close();
  }
});

test('a broken gzip body, or an encoding not asked for: a clear error', async () => {
  const gz = gzipSync(BODY);
  const broken = Buffer.concat([gz.subarray(0, 2_000), Buffer.alloc(500, 0x55), gz.subarray(2_500)]);
  for (const [encoding, body, pattern] of [['gzip', broken, /the gzip body is broken/], ['br', Buffer.from(BODY), /unexpected Content-Encoding br/]] as const) {
    const { conn, close } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
      res.end(body);
    });
    try {
      await assert.rejects(streamList(conn, '/x', {}, () => undefined), pattern);
    } finally {
      await close();
    }
  }
});

test('with protobuf: a gzipped protobuf list arrives as slices with encoded endpoints; a JSON answer is read as JSON', async () => {
  const slices = ITEMS.slice(0, 500).map((s) => ({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', addressType: 'IPv4', ...s }));
  const proto = gzipSync(encodeList('discovery.k8s.io/v1', 'EndpointSliceList', { resourceVersion: '43' }, slices.map(encodeEndpointSlice)));
  let accept = '';
  let json = false;
  const { conn, close } = await serve((req, res) => {
    accept = String(req.headers.accept);
    if (json) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(BODY);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf', 'content-encoding': 'gzip' });
    writeInPieces(res, proto, 331);
  });
  try {
    const items: unknown[] = [];
    const meta = await streamList(conn, '/apis/discovery.k8s.io/v1/endpointslices', {}, (item) => items.push(item), { protobuf: true });
    assert.equal(accept, 'application/vnd.kubernetes.protobuf, application/json');
    assert.equal(meta.resourceVersion, '43');
    assert.equal(items.length, 500);
    assert.ok(items.every((i) => i instanceof LazyEndpointSlice && i.encoded.size === 1));
    assert.deepEqual(items.map((i) => (i as LazyEndpointSlice).metadata.name), slices.map((s) => s.metadata?.name));
    json = true;
    let n = 0;
    assert.equal((await streamList(conn, '/x', {}, () => n++, { protobuf: true })).resourceVersion, '42');
    assert.equal(n, ITEMS.length);
  } finally {
    await close();
  }
});
