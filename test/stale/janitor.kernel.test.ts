/**
 * The janitor as the agent starts it (`startJanitor`: EndpointSlice list/watch, live-pod
 * checks by `status.podIP`, interval and removal scans) against the real kernel's conntrack in
 * a node namespace (nftables DNAT to pod addresses) and the API stand-in (test/apiserver)
 * serving EndpointSlices and Pods over the wire: list with resourceVersion, chunked watch
 * events. Real clock, grace 1.5 s.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConnection } from '../../kube/load.js';
import { Registry } from 'prom-client';
import { openNetlink, type NativeNetlink } from 'netlink-native';
import { systemClock } from '../../time/clock.js';
import { startJanitor, type RunningJanitor, type StaleJanitor } from '../../agent/stale/index.js';
import { createLogger } from '../../log/logger.js';
import { AGENT_METRICS } from '../../src/metric-names.js';
import { FakeApiServer, type JsonObject } from '../apiserver/server.js';
import { DnatNode } from './dnat-node.js';
import { slice } from './fixtures.js';
import { podObject } from './inventory-file.js';

const node = new DnatNode(`janitor-j${process.pid}-`, 246);
const OWNED = '10.246.0.5';
const TERMINATING = '10.246.0.6';
const NEVER = '10.246.0.7';
const REUSED_POD = '10.246.0.8';
const LATE = '10.246.0.9'; // its endpoint appears during the grace
const GRACE_MS = 1500;

let api: NativeNetlink;
const logLines: Array<Record<string, unknown>> = [];
const registry = new Registry();
const apiServer = new FakeApiServer();
const dir = mkdtempSync(join(tmpdir(), 'janitor-j-'));
let running: RunningJanitor;
let janitor: StaleJanitor;

function dnsSlice(extra: string[] = []): JsonObject {
  return slice('kube-dns-x1', 'kube-dns', [{ port: 53, protocol: 'UDP' }], [
    { ip: OWNED },
    { ip: TERMINATING, ready: false, serving: false, terminating: true },
    ...extra.map((ip) => ({ ip })),
  ], 'kube-system') as JsonObject;
}

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function metricValue(name: string, protocol: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values as Array<{ value: number; labels: Record<string, string> }> | undefined)?.find((v) => v.labels.protocol === protocol)?.value;
}

describe('janitor (real conntrack in a node namespace)', () => {
  before(async () => {
    node.setup([
      { protocol: 'udp', service: '10.96.0.10', servicePort: 53, target: OWNED, targetPort: 53 },
      { protocol: 'udp', service: '10.96.0.11', servicePort: 53, target: TERMINATING, targetPort: 53 },
      { protocol: 'udp', service: '10.96.0.12', servicePort: 53, target: NEVER, targetPort: 53 },
      { protocol: 'udp', service: '10.96.0.13', servicePort: 53, target: REUSED_POD, targetPort: 53 },
      { protocol: 'udp', service: '10.96.0.14', servicePort: 53, target: LATE, targetPort: 53 },
    ], { 'net.netfilter.nf_conntrack_udp_timeout': '600' });
    for (const vip of ['10.96.0.10', '10.96.0.11', '10.96.0.13', '10.96.0.14']) node.sendUdp(vip, 53, 2);
    node.sendUdp('10.96.0.12', 53, 3);
    api = openNetlink({ netns: node.node });
    await apiServer.start();
    apiServer.putEndpointSlice(dnsSlice());
    apiServer.putPod(podObject('tools', 'reused', 'node-b', REUSED_POD) as JsonObject); // a live pod holds this IP again
    apiServer.putPod(podObject('old', 'done', 'node-a', NEVER, 'Succeeded') as JsonObject); // finished: holds nothing
    apiServer.failNext(3, 500, 'list'); // the first EndpointSlice lists fail (retried with backoff): nothing is scanned until one succeeds
    const connection = await loadKubeConnection({ kubeconfig: apiServer.writeKubeconfig(join(dir, 'kubeconfig')) });
    const logger = createLogger({ level: 'debug', component: 'agent', destination: new Writable({ write(chunk: Buffer, _e, cb) { logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); cb(); } }) });
    running = startJanitor({ connection, conntrack: api, registry, logger, clock: systemClock, graceMs: GRACE_MS, intervalMs: 60_000, backoffMaxMs: 1000 });
    janitor = running.janitor;
  });

  after(async () => {
    await running.stop();
    await apiServer.close();
    api.close();
    node.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scans nothing before the first full EndpointSlice list (the first list failed), then syncs from the stand-in', async () => {
    assert.equal(janitor.isSynced, false);
    assert.equal(await janitor.scan(), undefined);
    assert.equal(node.entriesTo(NEVER, 53), 3);
    await until('the janitor synced after the failed list', () => janitor.isSynced);
    assert.ok(apiServer.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && r.query.watch === undefined).length >= 2, 'listed again after the failure');
    await until('a watch with bookmarks', () => apiServer.requests.some((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && r.query.watch === 'true' && r.query.allowWatchBookmarks === 'true'), 5000);
  });

  it('deletes only never-owned entries, only after the grace, and never one whose endpoint appeared during the grace', async () => {
    // The first scan (right after sync) starts the grace of NEVER x3 + LATE x2; the live pod's IP is asked of the API and left alone.
    await until('the first scan', () => janitor.lastReport !== undefined);
    const beforeFirstScan = Date.now() - (janitor.lastReport?.ms ?? 0);
    const first = janitor.lastReport;
    assert.equal(first?.stale, 5, 'NEVER x3 + LATE x2; the live pod\'s IP is not stale');
    assert.equal(first?.livePodSkips, 2);
    assert.equal(first?.deleted, 0, 'within the grace');
    assert.equal(await metricValue(AGENT_METRICS.staleEntries, 'udp'), 5);
    assert.ok(apiServer.requests.some((r) => r.path === '/api/v1/pods' && r.query.fieldSelector === `status.podIP=${REUSED_POD}`));

    const t0 = Date.now();
    await sleep(500);
    apiServer.putEndpointSlice(dnsSlice([LATE])); // the endpoint shows up during the grace (a MODIFIED watch event)
    await until('the watch delivered the new endpoint', () => janitor.ownership.owns('udp', LATE, 53), 5000);
    const second = await janitor.scan();
    assert.equal(second?.stale, 3);
    assert.equal(second?.deleted, 0);
    if (Date.now() < beforeFirstScan + GRACE_MS) assert.equal(node.entriesTo(NEVER, 53), 3, 'still within the grace');
    // The janitor scans again by itself once the first stale entries' grace is over.
    while (node.entriesTo(NEVER, 53) > 0 && Date.now() < t0 + GRACE_MS + 20_000) await sleep(100);
    assert.equal(node.entriesTo(NEVER, 53), 0);
    assert.ok(Date.now() - beforeFirstScan > GRACE_MS, 'not before the grace');
    await janitor.scan(); // joins the deleting scan (the kernel is faster than its await)
    for (const [ip, n] of [[OWNED, 2], [TERMINATING, 2], [REUSED_POD, 2], [LATE, 2]] as const) assert.equal(node.entriesTo(ip, 53), n, ip);
    assert.equal(await metricValue(AGENT_METRICS.staleDeleted, 'udp'), 3);
    const line = logLines.find((l) => typeof l.msg === 'string' && l.msg.includes('deleted 3 stale entries'));
    assert.equal(line?.service, 'udp 10.96.0.12:53', 'the log names the service address');
    assert.deepEqual(line?.targets, [`${NEVER}:53`]);
  });

  it('after an endpoint removal (watch event) scans by itself and deletes its entries once the grace has passed; a relist after 410 keeps the rest owned', async () => {
    const before = janitor.lastReport;
    const removedAt = Date.now();
    apiServer.putEndpointSlice(dnsSlice()); // LATE removed from the slice
    // A follow-up of the previous test's joined scan may report first, from before the removal:
    // wait for the scan that saw LATE unowned (its entries waiting, or deleted).
    const sawRemoval = (): boolean => janitor.lastReport !== before && ((janitor.lastReport?.waiting ?? 0) > 0 || (janitor.lastReport?.deleted ?? 0) > 0);
    while (!sawRemoval() && Date.now() - removedAt < 5000) await sleep(20);
    assert.ok(sawRemoval(), 'a scan ran after the removal');
    assert.equal(janitor.lastReport?.deleted, 0, 'the first scan after the removal only starts the grace');
    assert.equal(janitor.lastReport?.waiting, 2);
    const deadline = Date.now() + GRACE_MS + 20_000;
    while (node.entriesTo(LATE, 53) > 0 && Date.now() < deadline) await sleep(100);
    assert.equal(node.entriesTo(LATE, 53), 0, 'deleted by the follow-up scan');
    await janitor.scan(); // joins the deleting scan, whose log follows the kernel's delete
    const line = logLines.find((l) => l.service === 'udp 10.96.0.14:53');
    assert.equal(line?.serviceName, 'kube-system/kube-dns', 'the last owner is named');
    // 410 Gone: the watch relists; the owned entries stay owned throughout.
    const lists = apiServer.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && r.query.watch === undefined).length;
    apiServer.sendBookmarks();
    apiServer.expireResourceVersions();
    await until('a relist after 410', () => apiServer.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && r.query.watch === undefined).length > lists);
    await janitor.scan();
    for (const [ip, n] of [[OWNED, 2], [TERMINATING, 2], [REUSED_POD, 2]] as const) assert.equal(node.entriesTo(ip, 53), n, ip);
    assert.equal(janitor.lastReport?.stale, 0);
  });
});
