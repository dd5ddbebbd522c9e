/**
 * The stand-in's `/stand-in/...` control routes for Namespaces, Services and stats, as the
 * lab or a bench in another process uses them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from './server.js';
import { managedPod } from './pods.js';
import { service } from './cluster-objects.js';

describe('API stand-in control routes: Namespaces, Services, stats', () => {
  const api = new FakeApiServer();
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const res = await fetch(`${api.url}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, json: await res.json() };
  };

  before(async () => {
    await api.start();
  });

  after(async () => {
    await api.close();
  });

  it('puts and deletes Namespaces and Services; the Service\'s slices follow; stats answer', async () => {
    assert.equal((await call('POST', '/stand-in/namespaces', { name: 'shop', labels: { 'conndrain.io/inject': 'enabled' } })).status, 200);
    assert.equal((await call('POST', '/stand-in/namespaces', { labels: {} })).status, 400);
    assert.equal(api.listNamespaces()[0]?.metadata?.labels?.['conndrain.io/inject'], 'enabled');
    await call('POST', '/stand-in/pods', managedPod({ name: 'a', nodeName: 'n1', ips: ['10.3.0.1'] }));
    const put = await call('POST', '/stand-in/services', service({ name: 'web', namespace: 'shop', selector: { app: 'shop' }, ports: [{ port: 80 }] }));
    assert.equal(put.status, 200);
    assert.match((put.json as { spec: { clusterIP: string } }).spec.clusterIP, /^10\.96\./);
    assert.equal(api.listEndpointSlices().length, 1);
    assert.equal((await call('GET', '/api/v1/namespaces/shop/services/web')).status, 200);
    assert.equal((await call('GET', '/api/v1/namespaces/shop')).status, 200);
    assert.equal((await call('GET', '/api/v1/namespaces/shop/pods/a')).status, 200);
    assert.equal((await call('GET', '/api/v1/namespaces/bank')).status, 404);
    const listed = await call('GET', '/stand-in/services');
    assert.deepEqual((listed.json as Array<{ metadata: { name: string } }>).map((s) => s.metadata.name), ['web']);
    assert.equal((await call('DELETE', '/stand-in/services/shop/web')).status, 200);
    assert.equal((await call('DELETE', '/stand-in/services/shop/web')).status, 404);
    assert.equal(api.listEndpointSlices().length, 0);
    assert.equal((await call('DELETE', '/stand-in/namespaces/shop')).status, 200);
    assert.equal(api.listNamespaces().length, 0);
    await fetch(`${api.url}/api/v1/namespaces`, { headers: { 'user-agent': 'agent-n1' } }).then((r) => r.text());
    const stats = (await call('GET', '/stand-in/stats')).json as { bytesSent: { byClient: Record<string, { namespaces?: { lists: number } }> }; sliceController: { writes: number; deletes: number } };
    assert.equal(stats.bytesSent.byClient['agent-n1']?.namespaces?.lists, 1);
    assert.deepEqual(stats.sliceController, { writes: 1, deletes: 1 });
    await call('POST', '/stand-in/stats/reset');
    assert.equal(api.bytesSent().total, 0);
  });
});
