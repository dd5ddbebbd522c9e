import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { managedPod, setReady } from '../test/apiserver/pods.js';
import { AgentRig, until } from '../test/agent/agent-rig.js';
import { PodCache } from './pod-cache.js';
import { PodWatch } from './watch.js';
import { systemClock } from '../kube/clock.js';
import { loadKubeConnection } from '../kube/load.js';

// The API server here is the stand-in of test/apiserver (no real one can run on these machines).
const rig = new AgentRig('cd-watch');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

async function startWatch(pageSize?: number, storeKeys = false): Promise<{ cache: PodCache; watch: PodWatch; restarts: unknown[]; syncs: number[]; relists: number[] }> {
  const connection = await loadKubeConnection({ kubeconfig: rig.kubeconfig });
  const cache = new PodCache(0);
  const restarts: unknown[] = [];
  const syncs: number[] = [];
  const relists: number[] = [];
  const watch = new PodWatch(
    { connection, pageSize, backoffMaxMs: 400, clock: systemClock, logger: pino({ level: 'silent' }) },
    {
      upsert: (pod) => cache.upsert(pod),
      remove: (uid) => cache.remove(uid),
      synced: () => syncs.push(cache.size),
      restarting: (error) => restarts.push(error),
      relisting: (delayMs) => relists.push(delayMs),
      ...(storeKeys ? { keys: () => cache.knownUids() } : {}),
    },
  );
  watch.start();
  return { cache, watch, restarts, syncs, relists };
}

test('lists, syncs once, follows ADDED/MODIFIED/DELETED, relists on 410, restarts after errors', async () => {
  server.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: ['10.1.0.1'] }));
  server.putPod(managedPod({ name: 'b', nodeName: 'n1', ips: ['10.1.0.2'] }));
  server.putPod({ metadata: { name: 'unmanaged', namespace: 'shop', labels: { app: 'x' } }, spec: {}, status: { podIP: '10.1.0.99' } });
  const { cache, watch, restarts, syncs } = await startWatch();
  try {
    await until('sync', () => watch.synced);
    assert.deepEqual(syncs, [2], 'synced after the first list was applied; the unmanaged pod is filtered by the label selector');
    await until('watch request', () => server.openWatches > 0);
    const watchReq = server.requests.find((r) => r.query.watch === 'true');
    assert.equal(watchReq?.query.labelSelector, 'conndrain.io/managed=true');
    assert.equal(watchReq?.query.allowWatchBookmarks, 'true');

    server.modifyPod('shop', 'a', (p) => setReady(p, false));
    await until('MODIFIED', () => cache.byDrain('drain-a')?.view.ready === false);
    server.sendBookmarks();
    server.deletePod('shop', 'b');
    await until('DELETED', () => cache.byDrain('drain-b') === undefined);

    // 410: history compacted while c was added and a deleted; the relist must see both.
    const listsBefore = server.requests.filter((r) => r.query.watch === undefined && r.path === '/api/v1/pods').length;
    server.expireResourceVersions();
    server.putPod(managedPod({ name: 'c', nodeName: 'n1', ips: ['10.1.0.3'] }));
    server.deletePod('shop', 'a');
    await until('relist after 410', () => cache.byDrain('drain-c') !== undefined && cache.byDrain('drain-a') === undefined);
    const listsAfter = server.requests.filter((r) => r.query.watch === undefined && r.path === '/api/v1/pods').length;
    assert.ok(listsAfter > listsBefore, 'relisted');
    assert.equal(restarts.length, 0, 'a 410 is not an error restart');

    // A dropped connection and failing lists: restart with backoff until it works again.
    server.failNext(2, 500, 'any');
    server.dropWatches();
    server.putPod(managedPod({ name: 'd', nodeName: 'n1', ips: ['10.1.0.4'] }));
    await until('recovered after errors', () => cache.byDrain('drain-d') !== undefined);
    assert.ok(restarts.length >= 1, `restarts counted (${restarts.length})`);
    assert.equal(syncs.length, 1, 'synced is reported once');
  } finally {
    await watch.stop();
  }
});

test('lists from the watch cache (resourceVersion=0, one streamed answer) and keeps only the pruned fields of each pod', async () => {
  for (let i = 0; i < 5; i++) server.putPod(managedPod({ name: `page-${i}`, nodeName: 'n2', ips: [`10.2.0.${i}`] }));
  const managed = server.listPods().filter((p) => p.metadata?.labels?.['conndrain.io/managed'] === 'true').length;
  const before = server.requests.length;
  const quorumBefore = server.listStats.quorum;
  const { cache, watch } = await startWatch(2);
  try {
    await until('sync', () => watch.synced);
    assert.equal(cache.size, managed);
    const lists = server.requests.slice(before).filter((r) => r.path === '/api/v1/pods' && r.query.watch === undefined);
    assert.equal(lists.length, 1, 'one list, whole, from the cache');
    assert.equal(lists[0]?.query.resourceVersion, '0', 'as client-go informers: resourceVersion=0');
    assert.equal(server.listStats.quorum, quorumBefore, 'no quorum read of etcd');
    assert.deepEqual(cache.byDrain('drain-page-3')?.view.ips, ['10.2.0.3']);
  } finally {
    await watch.stop();
  }
});

test('a list answered 410 falls back to a paginated quorum read (limit/continue)', async () => {
  const managed = server.listPods().filter((p) => p.metadata?.labels?.['conndrain.io/managed'] === 'true').length;
  const before = server.requests.length;
  server.failNext(1, 410, 'list');
  const { cache, watch } = await startWatch(2);
  try {
    await until('sync', () => watch.synced);
    assert.equal(cache.size, managed);
    const lists = server.requests.slice(before).filter((r) => r.path === '/api/v1/pods' && r.query.watch === undefined);
    const paged = lists.slice(1);
    assert.equal(lists[0]?.query.resourceVersion, '0');
    assert.equal(paged.length, Math.ceil(managed / 2), 'then one request per page');
    assert.ok(paged.every((r) => r.query.limit === '2' && r.query.resourceVersion === undefined));
    assert.equal(paged.filter((r) => r.query.continue !== undefined).length, paged.length - 1);
  } finally {
    await watch.stop();
  }
});

test('repeated 410 Gone relists with jittered exponential backoff, not in a hot loop (issue 14 item 5)', async () => {
  const { watch, relists } = await startWatch();
  try {
    await until('sync', () => watch.synced);
    const listsOf = (): number => server.requests.filter((r) => r.path === '/api/v1/pods' && r.query.watch === undefined).length;
    const before = listsOf();
    await until('watching', () => server.openWatches > 0);
    server.failNext(9, 410, 'watch');
    server.expireResourceVersions(); // the open watch gets an ERROR 410 event, the next 9 an HTTP 410
    await new Promise((r) => setTimeout(r, 130));
    const within = listsOf() - before;
    assert.ok(within <= 2, `10 410s relisted ${within} times in 130 ms`);
    await until('three relists scheduled', () => relists.length >= 3);
    assert.equal(relists[0], 0, 'the first 410 relists at once');
    assert.ok((relists[1] ?? 0) >= 250 && (relists[2] ?? 0) >= 400, `then waits grow (capped at 400 ms here): ${relists.join(', ')}`);
  } finally {
    await watch.stop();
  }
});

test('with the store\'s keys (no key set of its own), a relist after 410 still removes the pods gone meanwhile', async () => {
  server.putPod(managedPod({ name: 'k1', nodeName: 'n3', ips: ['10.3.0.1'] }));
  server.putPod(managedPod({ name: 'k2', nodeName: 'n3', ips: ['10.3.0.2'] }));
  const { cache, watch } = await startWatch(undefined, true);
  try {
    await until('sync', () => watch.synced && cache.byDrain('drain-k2') !== undefined);
    await until('watch request', () => server.openWatches > 0);
    server.expireResourceVersions();
    server.deletePod('shop', 'k1');
    server.putPod(managedPod({ name: 'k3', nodeName: 'n3', ips: ['10.3.0.3'] }));
    await until('relist after 410', () => cache.byDrain('drain-k3') !== undefined && cache.byDrain('drain-k1') === undefined);
    assert.ok(cache.byDrain('drain-k2') !== undefined, 'a pod still there is kept');
  } finally {
    await watch.stop();
  }
});
