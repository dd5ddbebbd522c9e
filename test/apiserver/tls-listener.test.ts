/**
 * The stand-in's HTTPS listener (bench/scale's agent reaches the API over TLS, as on a node):
 * the kubeconfig it writes carries the CA and the name the certificate holds, and the agent's
 * lean connection lists through it; a client that does not trust the certificate is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConnection } from '../../kube/load.js';
import { generateSelfSigned } from '../../kube/metrics-auth/serving-pair.js';
import { FakeApiServer } from './server.js';
import { managedPod } from './pods.js';

function get(url: string, options: RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('over the HTTPS listener the kubeconfig connection lists pods; an untrusting client is refused', async () => {
  const api = new FakeApiServer();
  api.putPod(managedPod({ name: 'web-1', nodeName: 'node-a', ips: ['10.1.0.1'], uid: 'uid-1' }));
  await api.start();
  const dir = mkdtempSync(join(tmpdir(), 'cd-api-tls-'));
  try {
    const pair = await generateSelfSigned(['kubernetes.default.svc'], new Date(), 1);
    const tlsUrl = await api.listenTls(pair);
    assert.match(tlsUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'), tlsUrl, { ca: pair.cert, serverName: 'kubernetes.default.svc' });
    const kube = await loadKubeConnection({ kubeconfig });
    const server = kube.getCurrentCluster()?.server ?? '';
    assert.equal(server, tlsUrl);
    const opts = await kube.applyToFetchOptions({});
    const listed = await get(`${server}/api/v1/pods`, { agent: opts.agent as Agent, headers: opts.headers as Record<string, string> });
    assert.equal(listed.status, 200);
    assert.deepEqual((JSON.parse(listed.body) as { items: Array<{ metadata: { name: string } }> }).items.map((p) => p.metadata.name), ['web-1']);
    await assert.rejects(get(`${tlsUrl}/api/v1/pods`, { agent: false }), /self[- ]signed|unable to verify/i);
    // The plain listener still answers: the bench's kube-proxy and reader use it.
    assert.equal((await fetch(`${api.url}/api/v1/pods`)).status, 200);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await api.close();
  }
});
