/**
 * The janitor's EndpointSlice list/watch against a small HTTP server speaking the API's wire
 * format for `/apis/discovery.k8s.io/v1/endpointslices` (paginated list with `continue`,
 * chunked watch events, a 410 ERROR that forces a relist). The project's API stand-in
 * (test/apiserver) serves pods only, so this test brings the few lines it needs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { systemClock } from '../../agent/clock.js';
import { SliceWatch, ENDPOINT_SLICES_PATH } from '../../agent/janitor/index.js';
import { OwnershipIndex, type EndpointSliceLike } from '../../src/stale/index.js';
import { slice } from './fixtures.js';

function withRv(s: EndpointSliceLike, rv: number): EndpointSliceLike {
  return { ...s, metadata: { ...s.metadata, resourceVersion: String(rv) } as EndpointSliceLike['metadata'] };
}

describe('SliceWatch (EndpointSlice list/watch wire format)', () => {
  let server: Server;
  let url = '';
  const watchers: ServerResponse[] = [];
  const lists: string[] = [];
  let items = [withRv(slice('a', 'dns', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.0.0.1' }]), 10), withRv(slice('b', 'web', [{ port: 80 }], [{ ip: '10.0.0.2' }]), 11)];

  before(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      assert.equal(u.pathname, ENDPOINT_SLICES_PATH);
      if (u.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json' });
        watchers.push(res);
        return;
      }
      lists.push(u.search);
      const page = u.searchParams.get('continue') === 'p2' ? 1 : 0;
      const body = { kind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1', metadata: { resourceVersion: '20', ...(page === 0 && items.length > 1 ? { continue: 'p2' } : {}) }, items: page === 0 ? items.slice(0, 1) : items.slice(1) };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const w of watchers) w.end();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('lists every page before it says synced, then follows watch events and relists after 410', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const index = new OwnershipIndex();
    let ownedAtSync: boolean[] = [];
    let removals = 0;
    const synced = new Promise<void>((resolve) => {
      const watch = new SliceWatch({ kubeConfig: kc, clock: systemClock, backoffMaxMs: 1000 }, {
        upsert: (s) => { removals += index.upsert(s).removed; },
        remove: (s) => { removals += index.remove(s).removed; },
        synced: () => {
          ownedAtSync = [index.owns('udp', '10.0.0.1', 53), index.owns('tcp', '10.0.0.2', 80)];
          resolve();
        },
        restarting: () => undefined,
      });
      watch.start();
      after(() => watch.stop());
    });
    await synced;
    assert.deepEqual(ownedAtSync, [true, true], 'both pages were applied before synced');
    assert.equal(lists.length, 2, 'paginated list');

    const until = async (ok: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(ok());
    };
    await until(() => watchers.length === 1);
    const event = (type: string, object: unknown): void => { watchers.at(-1)?.write(`${JSON.stringify({ type, object })}\n`); };
    event('MODIFIED', withRv(slice('a', 'dns', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.3' }]), 21));
    await until(() => index.owns('udp', '10.0.0.3', 53));
    event('DELETED', items[1]);
    await until(() => !index.owns('tcp', '10.0.0.2', 80));
    assert.equal(removals, 1);

    // 410: the library relists; a slice missing from the new list is removed.
    items = [withRv(slice('a', 'dns', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.0.0.3' }]), 30)];
    event('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' });
    watchers.at(-1)?.end();
    await until(() => !index.owns('udp', '10.0.0.1', 53));
    assert.equal(index.owns('udp', '10.0.0.3', 53), true);
  });
});
