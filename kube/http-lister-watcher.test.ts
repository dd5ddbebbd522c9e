/**
 * The protobuf way out: a server whose protobuf frames or lists this client cannot decode fails
 * the watch or list once, with a message that says so, and every later one asks JSON only.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { KubeConnection } from './connection.js';
import { HttpListerWatcher } from './http-lister-watcher.js';

test('an undecodable protobuf watch fails once and is watched as JSON from then on', async () => {
  const accepts: string[] = [];
  const server = createServer((req, res) => {
    const accept = String(req.headers.accept);
    accepts.push(accept);
    if (accept.startsWith('application/vnd.kubernetes.protobuf')) {
      res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf;stream=watch' });
      res.end(Buffer.from([0, 0, 0, 3, 0xff, 0xff, 0xff])); // one frame that is not a WatchEvent
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } })}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const conn: KubeConnection = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }), applyToFetchOptions: () => Promise.resolve({}) };
  const lw = new HttpListerWatcher(conn, '/apis/discovery.k8s.io/v1/endpointslices', undefined, true);
  const watchOnce = (): Promise<{ events: string[]; error: unknown }> => new Promise((resolve) => {
    const events: string[] = [];
    void lw.watch({ resourceVersion: '1' }, (type) => events.push(type), (error) => resolve({ events, error }));
  });
  try {
    const first = await watchOnce();
    assert.match(String((first.error as Error).message), /watching as JSON from now on/);
    const second = await watchOnce();
    assert.deepEqual(second.events, ['ADDED']);
    assert.equal(second.error, null);
    assert.deepEqual(accepts, ['application/vnd.kubernetes.protobuf, application/json', 'application/json']);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('an undecodable protobuf list fails once; the next list and watch ask JSON only', async () => {
  const accepts: string[] = [];
  const server = createServer((req, res) => {
    const accept = String(req.headers.accept);
    accepts.push(accept);
    if (accept.startsWith('application/vnd.kubernetes.protobuf')) {
      res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf' });
      res.end(Buffer.from('k8s\0\x0a\x0b\x0a\x02v1\x12\x05Other', 'latin1')); // a list of a kind not decoded here
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true') === true) res.end();
    else res.end(JSON.stringify({ kind: 'EndpointSliceList', metadata: { resourceVersion: '8' }, items: [{ metadata: { name: 'a' } }] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const conn: KubeConnection = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }), applyToFetchOptions: () => Promise.resolve({}) };
  const lw = new HttpListerWatcher(conn, '/apis/discovery.k8s.io/v1/endpointslices', undefined, true);
  try {
    await assert.rejects(lw.list({}, () => undefined), /kind Other is not decoded here; listing and watching as JSON from now on/);
    const names: string[] = [];
    assert.deepEqual(await lw.list({}, (item) => names.push((item as { metadata: { name: string } }).metadata.name)), { resourceVersion: '8' });
    assert.deepEqual(names, ['a']);
    await new Promise<void>((resolve) => void lw.watch({ resourceVersion: '8' }, () => undefined, () => resolve()));
    assert.deepEqual(accepts, ['application/vnd.kubernetes.protobuf, application/json', 'application/json', 'application/json']);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
