/**
 * The stand-in compresses a list as kube-apiserver does (APIResponseCompression): gzip for a
 * client that accepts it when the body is over 128 KiB, plain otherwise; the bytes counted are
 * the bytes sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { FakeApiServer } from './server.js';
import { managedPod } from './pods.js';

function get(url: string, gzip: boolean): Promise<{ encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'user-agent': 'gzip-test', ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('a list over 128 KiB goes gzipped to a client that accepts gzip, counted as sent; a small one and a client without gzip get it plain', async () => {
  const api = new FakeApiServer();
  for (let i = 0; i < 400; i++) api.putPod(managedPod({ name: `p${i}`, nodeName: 'node-b', ips: [`10.9.${i >> 8}.${i & 255}`], uid: `uid-${i}` }));
  await api.start();
  try {
    const path = `${api.url}/api/v1/pods?resourceVersion=0`;
    const plain = await get(path, false);
    assert.equal(plain.encoding, undefined);
    assert.ok(plain.body.length > 128 * 1024, `the list is ${plain.body.length} bytes`);
    const before = api.bytesSent().byClient['gzip-test']?.pods?.list ?? 0;
    const zipped = await get(path, true);
    assert.equal(zipped.encoding, 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(zipped.body).toString('utf8')), JSON.parse(plain.body.toString('utf8')));
    const counted = (api.bytesSent().byClient['gzip-test']?.pods?.list ?? 0) - before;
    assert.equal(counted, zipped.body.length, 'the compressed bytes are counted');
    const small = await get(`${api.url}/api/v1/pods?resourceVersion=0&fieldSelector=${encodeURIComponent('metadata.name=p1')}`, true);
    assert.equal(small.encoding, undefined, 'a small list is not compressed');
  } finally {
    await api.close();
  }
});
