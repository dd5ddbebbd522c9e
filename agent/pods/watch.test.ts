import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { managedPod, setReady } from '../../test/apiserver/pods.js';
import { AgentRig, until } from '../../test/agent/agent-rig.js';
import { PodCache } from './pod-cache.js';
import { PodWatch } from './watch.js';
import { systemClock } from '../../time/clock.js';
import { loadKubeConnection } from '../../kube/load.js';
import type { WatchListMode } from '../../kube/watch-list.js';

// The API server here is the stand-in of test/apiserver (no real one can run on these machines).
const rig = new AgentRig('cd-watch');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

async function startWatch(pageSize?: number, watchList: WatchListMode = 'off', storeKeys = false): Promise<{ cache: PodCache; watch: PodWatch; restarts: unknown[]; syncs: number[]; relists: number[] }> {
  const connection = await loadKubeConnection({ kubeconfig: rig.kubeconfig });
  const cache = new PodCache(0);
  const restarts: unknown[] = [];
  const syncs: number[] = [];
  const relists: number[] = [];
  const watch = new PodWatch(
    { connection, nodeName: 'n1', pageSize, watchList, backoffMaxMs: 400, clock: systemClock, logger: pino({ level: 'silent' }) },
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

test('--watch-list=off: lists, syncs once, follows ADDED/MODIFIED/DELETED, relists on 410, restarts after errors', async () => {
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
  for (let i = 0; i < 5; i++) server.putPod(managedPod({ name: `page-${i}`, nodeName: 'n1', ips: [`10.2.0.${i}`] }));
  const managed = server.listPods().filter((p) => p.metadata?.labels?.['conndrain.io/managed'] === 'true').length;
  const before = server.requests.length;
  const quorumBefore = server.listStats.quorum;
  const { cache, watch } = await startWatch(2, 'off');
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
  const { cache, watch } = await startWatch(2, 'off');
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
    server.clearFailures();
    await watch.stop();
  }
});

// The streaming list (sendInitialEvents, KEP-3157) and its fallback. The stand-in serves it as
// a 1.34 server (`watchList = 'on'`), refuses it as a 1.33 one with the gate off (`'off'`: HTTP
// 422), or drops the parameters as an old proxy would (`'ignored'`).

const managedCount = (): number => server.listPods().filter((p) => p.metadata?.labels?.['conndrain.io/managed'] === 'true').length;
const podRequests = (from: number): typeof server.requests => server.requests.slice(from).filter((r) => r.path === '/api/v1/pods');
const streamRequests = (from: number): typeof server.requests => podRequests(from).filter((r) => r.query.sendInitialEvents === 'true');
const plainLists = (from: number): typeof server.requests => podRequests(from).filter((r) => r.query.watch === undefined);

test('--watch-list=auto: the initial state comes from a streaming list; synced only at its initial-events-end bookmark; no LIST', async () => {
  for (let i = 0; i < 4; i++) server.putPod(managedPod({ name: `stream-${i}`, nodeName: 'n1', ips: [`10.3.0.${i}`] }));
  const managed = managedCount();
  const before = server.requests.length;
  const stats = { ...server.listStats };
  server.holdInitialEventsEnd = true;
  const { cache, watch, syncs, restarts } = await startWatch(undefined, 'auto');
  try {
    await until('every initial ADDED applied', () => cache.size === managed);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(watch.synced, false, 'every pod is in, but the end bookmark has not come: not synced');
    assert.deepEqual(syncs, []);
    server.putPod(managedPod({ name: 'stream-late', nodeName: 'n1', ips: ['10.3.0.9'] })); // a change while the initial events run: after the bookmark
    server.releaseInitialEventsEnd();
    await until('sync', () => watch.synced);
    assert.deepEqual(syncs, [managed], 'synced once, at the bookmark, with the initial state only');
    await until('the live event on the same stream', () => cache.byDrain('drain-stream-late') !== undefined);
    const [req, ...more] = streamRequests(before);
    assert.equal(more.length, 0, 'one streaming request');
    assert.equal(req?.query.watch, 'true');
    assert.equal(req?.query.resourceVersionMatch, 'NotOlderThan');
    assert.equal(req?.query.allowWatchBookmarks, 'true');
    assert.equal(req?.query.resourceVersion, '', 'the first one asks the current state (a consistent read from the watch cache)');
    assert.equal(req?.query.labelSelector, 'conndrain.io/managed=true');
    assert.equal(plainLists(before).length, 0, 'no LIST request');
    assert.equal(server.listStats.streamed - stats.streamed, 1, 'the stand-in served one streaming list');
    assert.equal(server.listStats.fromCache + server.listStats.quorum, stats.fromCache + stats.quorum, '0 full lists');
    server.modifyPod('shop', 'stream-1', (p) => setReady(p, false));
    await until('MODIFIED', () => cache.byDrain('drain-stream-1')?.view.ready === false);
    assert.equal(restarts.length, 0);
  } finally {
    server.releaseInitialEventsEnd();
    await watch.stop();
  }
});

test('--watch-list=auto: a streaming list again after a 410 removes the pods deleted meanwhile (replace semantics, no LIST)', async () => {
  server.putPod(managedPod({ name: 'stays', nodeName: 'n1', ips: ['10.4.0.1'] }));
  server.putPod(managedPod({ name: 'leaves', nodeName: 'n1', ips: ['10.4.0.2'] }));
  const before = server.requests.length;
  const stats = { ...server.listStats };
  const { cache, watch, relists, syncs } = await startWatch(undefined, 'auto');
  try {
    await until('sync', () => watch.synced);
    assert.ok(cache.byDrain('drain-leaves') !== undefined);
    // History compacted (the open watch gets ERROR 410), and while the agent is away one pod goes, one comes.
    server.expireResourceVersions();
    server.deletePod('shop', 'leaves');
    server.putPod(managedPod({ name: 'arrives', nodeName: 'n1', ips: ['10.4.0.3'] }));
    await until('the new pod', () => cache.byDrain('drain-arrives') !== undefined);
    await until('the deleted pod removed at the end bookmark', () => cache.byDrain('drain-leaves') === undefined);
    assert.ok(cache.byDrain('drain-stays') !== undefined);
    assert.deepEqual(relists, [0], 'one relist, at once');
    assert.equal(syncs.length, 1, 'synced is reported once');
    const streams = streamRequests(before);
    assert.equal(streams.length, 2, 'both initial states came from streaming lists');
    assert.ok(Number(streams[1]?.query.resourceVersion) > 0, 'the second one: not older than the last synced resourceVersion');
    assert.equal(plainLists(before).length, 0, 'no LIST request');
    assert.equal(server.listStats.streamed - stats.streamed, 2);
    assert.equal(server.listStats.fromCache + server.listStats.quorum, stats.fromCache + stats.quorum, '0 full lists');
  } finally {
    await watch.stop();
  }
});

test('--watch-list=auto on a server with the WatchList gate off (1.33: HTTP 422): lists from the watch cache, and never asks again', async () => {
  server.watchList = 'off';
  const managed = managedCount();
  const before = server.requests.length;
  const stats = { ...server.listStats };
  const { cache, watch, restarts, syncs } = await startWatch(undefined, 'auto');
  try {
    await until('sync', () => watch.synced);
    assert.deepEqual(syncs, [managed]);
    assert.equal(server.listStats.refused - stats.refused, 1, 'one streaming list, refused');
    assert.equal(server.listStats.fromCache - stats.fromCache, 1, 'then one list from the watch cache');
    assert.equal(plainLists(before)[0]?.query.resourceVersion, '0');
    assert.equal(restarts.length, 0, 'a refusal is no error restart');
    // A 410 later: the relist is a LIST again, the streaming list is not retried this process life.
    await until('watching', () => server.openWatches > 0);
    server.expireResourceVersions();
    server.putPod(managedPod({ name: 'after-gate', nodeName: 'n1', ips: ['10.5.0.9'] }));
    await until('relisted', () => cache.byDrain('drain-after-gate') !== undefined);
    assert.equal(streamRequests(before).length, 1, 'asked once');
    assert.equal(server.listStats.fromCache - stats.fromCache, 2);
  } finally {
    server.watchList = 'on';
    await watch.stop();
  }
});

test('--watch-list=auto on a server that ignores sendInitialEvents (a plain watch): falls back to the list at its first non-ADDED event', async () => {
  server.watchList = 'ignored';
  const managed = managedCount();
  const before = server.requests.length;
  const stats = { ...server.listStats };
  const { cache, watch, restarts, syncs } = await startWatch(undefined, 'auto');
  try {
    await until('the synthetic ADDED events of the plain watch', () => cache.size === managed);
    assert.equal(watch.synced, false, 'ADDED events alone never end an initial state');
    server.sendBookmarks(); // a plain bookmark, without the initial-events-end annotation
    await until('sync', () => watch.synced);
    assert.deepEqual(syncs, [managed]);
    assert.equal(server.listStats.fromCache - stats.fromCache, 1, 'synced from a list from the watch cache');
    assert.equal(streamRequests(before).length, 1);
    assert.equal(restarts.length, 0);
  } finally {
    server.watchList = 'on';
    await watch.stop();
  }
});

test('--watch-list=on on a server with the gate off: restarts with a clear error, never lists', async () => {
  server.watchList = 'off';
  const before = server.requests.length;
  const { watch, restarts } = await startWatch(undefined, 'on');
  try {
    await until('two refusals', () => restarts.length >= 2);
    assert.match(String(restarts[0]), /does not serve streaming lists/);
    assert.equal(plainLists(before).length, 0);
    assert.equal(watch.synced, false);
  } finally {
    server.watchList = 'on';
    await watch.stop();
  }
});

for (const mode of ['off', 'auto'] as const) {
  test(`with the store's keys (no key set of its own), --watch-list=${mode}: the sync after a 410 still removes the pods gone meanwhile`, async () => {
    server.putPod(managedPod({ name: `k1-${mode}`, nodeName: 'n1', ips: [mode === 'off' ? '10.3.0.1' : '10.3.1.1'] }));
    server.putPod(managedPod({ name: `k2-${mode}`, nodeName: 'n1', ips: [mode === 'off' ? '10.3.0.2' : '10.3.1.2'] }));
    const { cache, watch } = await startWatch(undefined, mode, true);
    try {
      await until('sync', () => watch.synced && cache.byDrain(`drain-k2-${mode}`) !== undefined);
      await until('watch request', () => server.openWatches > 0);
      server.expireResourceVersions();
      server.deletePod('shop', `k1-${mode}`);
      server.putPod(managedPod({ name: `k3-${mode}`, nodeName: 'n1', ips: [mode === 'off' ? '10.3.0.3' : '10.3.1.3'] }));
      await until('relist after 410', () => cache.byDrain(`drain-k3-${mode}`) !== undefined && cache.byDrain(`drain-k1-${mode}`) === undefined);
      assert.ok(cache.byDrain(`drain-k2-${mode}`) !== undefined, 'a pod still there is kept');
    } finally {
      await watch.stop();
    }
  });
}
