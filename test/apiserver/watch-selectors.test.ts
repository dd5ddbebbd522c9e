/**
 * The stand-in over HTTP: selectors on LIST, WATCH and the streaming list (a pod moving onto
 * and off a node under `fieldSelector=spec.nodeName=..`, kube-proxy's slice selector, opted-in
 * Namespaces), the Namespace and Service collections (also through the client's
 * RestartingListWatch), and the bytes counted per resource and client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { get, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeApiServer, type JsonObject } from './server.js';
import { managedPod } from './pods.js';
import { service } from './cluster-objects.js';
import { matchesLabelSelector } from './selectors.js';
import { RestartingListWatch } from '../../kube/list-watch.js';
import { loadKubeConnection } from '../../kube/load.js';
import { systemClock } from '../../time/clock.js';

const KUBE_PROXY_SELECTOR = '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name';

interface Event {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
}

/** An open watch collecting its events. */
class Watcher {
  readonly events: Event[] = [];
  private res: IncomingMessage | undefined;

  constructor(url: string, userAgent = 'test') {
    let rest = '';
    get(url, { headers: { 'user-agent': userAgent } }, (res) => {
      this.res = res;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        rest += chunk;
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line !== '') this.events.push(JSON.parse(line) as Event);
      });
    });
  }

  names(): string[] {
    return this.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`);
  }

  async until(count: number): Promise<void> {
    for (let i = 0; i < 300 && this.events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(this.events.length >= count, `${count} events, got ${JSON.stringify(this.names())}`);
  }

  close(): void {
    this.res?.destroy();
  }
}

async function list(url: string, userAgent = 'test'): Promise<{ metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string } }> }> {
  const res = await fetch(url, { headers: { 'user-agent': userAgent } });
  assert.equal(res.status, 200);
  return (await res.json()) as { metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string } }> };
}

function moveTo(api: FakeApiServer, name: string, node: string): void {
  api.modifyPod('shop', name, (p) => { (p.spec as { nodeName: string }).nodeName = node; });
}

describe('API stand-in: selectors, Namespaces, Services and bytes sent', () => {
  const api = new FakeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'stand-in-'));

  before(async () => {
    await api.start();
  });

  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('evaluates !key, key!=value, comma AND and in/notin', () => {
    const slice = { 'kubernetes.io/service-name': 'web', 'conndrain.io/hold': 'enabled' };
    assert.ok(matchesLabelSelector(`${KUBE_PROXY_SELECTOR},conndrain.io/hold!=disabled`, slice));
    assert.ok(!matchesLabelSelector(`${KUBE_PROXY_SELECTOR},conndrain.io/hold!=enabled`, slice));
    assert.ok(!matchesLabelSelector(KUBE_PROXY_SELECTOR, { ...slice, 'service.kubernetes.io/headless': '' }));
    assert.ok(matchesLabelSelector('conndrain.io/hold in (enabled,always),kubernetes.io/service-name', slice));
    assert.ok(!matchesLabelSelector('conndrain.io/hold notin (enabled)', slice));
    assert.ok(matchesLabelSelector('absent notin (x),absent!=x', slice));
    assert.ok(!matchesLabelSelector('absent in (x)', slice));
  });

  it('a spec.nodeName watch sees a pod moving onto its node as ADDED and off it as DELETED (plain and streaming)', async () => {
    api.putPod(managedPod({ name: 'mover', nodeName: 'n2', ips: ['10.2.0.1'] }));
    api.putPod(managedPod({ name: 'stay', nodeName: 'n1', ips: ['10.2.0.2'] }));
    const selector = `fieldSelector=${encodeURIComponent('spec.nodeName=n1')}&labelSelector=${encodeURIComponent('conndrain.io/managed=true')}`;
    const listed = await list(`${api.url}/api/v1/pods?${selector}`);
    assert.deepEqual(listed.items.map((p) => p.metadata.name), ['stay']);
    const plain = new Watcher(`${api.url}/api/v1/pods?watch=true&resourceVersion=${listed.metadata.resourceVersion}&${selector}`);
    const streaming = new Watcher(`${api.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&${selector}`);
    await streaming.until(2);
    moveTo(api, 'mover', 'n1');
    api.modifyPod('shop', 'stay', (p) => { (p.metadata as Record<string, unknown>).annotations = { a: 'b' }; });
    moveTo(api, 'mover', 'n3');
    api.modifyPod('shop', 'mover', (p) => { (p.metadata as Record<string, unknown>).annotations = { a: 'c' }; });
    await plain.until(3);
    await streaming.until(5);
    assert.deepEqual(plain.names(), ['ADDED mover', 'MODIFIED stay', 'DELETED mover']);
    assert.deepEqual(streaming.names(), ['ADDED stay', 'BOOKMARK ', 'ADDED mover', 'MODIFIED stay', 'DELETED mover']);
    // The DELETED carries the state it last matched in, at the change's resourceVersion.
    const deleted = plain.events[2]?.object as JsonObject;
    assert.equal((deleted.spec as { nodeName: string }).nodeName, 'n1');
    assert.equal(deleted.metadata?.resourceVersion, String(Number(plain.events[1]?.object.metadata?.resourceVersion) + 1));
    // A watch replaying history from before sees the same.
    const replay = new Watcher(`${api.url}/api/v1/pods?watch=true&resourceVersion=${listed.metadata.resourceVersion}&${selector}`);
    await replay.until(3);
    assert.deepEqual(replay.names(), plain.names());
    for (const w of [plain, streaming, replay]) w.close();
  });

  it('serves Namespaces (cluster-scoped) and Services by LIST and WATCH, and slices under kube-proxy\'s selector', async () => {
    api.putNamespace('shop', { 'conndrain.io/inject': 'enabled' });
    api.putNamespace('bank');
    const optedIn = `labelSelector=${encodeURIComponent('conndrain.io/inject=enabled')}`;
    const namespaces = await list(`${api.url}/api/v1/namespaces?${optedIn}`);
    assert.deepEqual(namespaces.items.map((n) => n.metadata.name), ['shop']);
    assert.equal((namespaces.items[0] as { metadata: { namespace?: string } }).metadata.namespace, undefined);
    const nsWatch = new Watcher(`${api.url}/api/v1/namespaces?watch=true&resourceVersion=${namespaces.metadata.resourceVersion}&${optedIn}`);
    api.putNamespace('bank', { 'conndrain.io/inject': 'enabled' });
    api.putNamespace('shop', {});
    api.deleteNamespace('bank');
    await nsWatch.until(3);
    assert.deepEqual(nsWatch.names(), ['ADDED bank', 'DELETED shop', 'DELETED bank']);
    nsWatch.close();

    const kubeProxy = `labelSelector=${encodeURIComponent(KUBE_PROXY_SELECTOR)}`;
    const before = await list(`${api.url}/apis/discovery.k8s.io/v1/endpointslices?${kubeProxy}`);
    const sliceWatch = new Watcher(`${api.url}/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion=${before.metadata.resourceVersion}&${kubeProxy}`);
    const svcWatch = new Watcher(`${api.url}/api/v1/namespaces/shop/services?watch=true&resourceVersion=${before.metadata.resourceVersion}`);
    api.putService(service({ name: 'web', namespace: 'shop', selector: { app: 'shop' }, ports: [{ port: 80 }] }));
    api.putService(service({ name: 'web-headless', namespace: 'shop', selector: { app: 'shop' }, ports: [{ port: 80 }], headless: true }));
    api.putService(service({ name: 'other', namespace: 'bank', selector: { app: 'shop' }, ports: [{ port: 80 }] }));
    await sliceWatch.until(1);
    await svcWatch.until(2);
    assert.deepEqual(svcWatch.names(), ['ADDED web', 'ADDED web-headless']);
    const services = await list(`${api.url}/api/v1/services`);
    assert.deepEqual(services.items.map((s) => s.metadata.name).sort(), ['other', 'web', 'web-headless']);
    const slices = await list(`${api.url}/apis/discovery.k8s.io/v1/endpointslices?${kubeProxy}`);
    const sliceServices = slices.items.map((s) => (s.metadata as unknown as { labels: Record<string, string> }).labels['kubernetes.io/service-name']).sort();
    assert.deepEqual(sliceServices, ['other', 'web']);
    assert.ok(sliceWatch.names().every((n) => n.startsWith('ADDED web-') || n.startsWith('ADDED other-')), JSON.stringify(sliceWatch.names()));
    sliceWatch.close();
    svcWatch.close();
  });

  it('feeds the client\'s RestartingListWatch with Namespaces', async () => {
    const connection = await loadKubeConnection({ kubeconfig: api.writeKubeconfig(join(dir, 'kubeconfig')) });
    const held = new Map<string, Record<string, string>>();
    let synced = false;
    const watch = new RestartingListWatch<{ name: string; labels: Record<string, string> }>(
      {
        connection,
        path: '/api/v1/namespaces',
        labelSelector: 'conndrain.io/inject=enabled',
        project: (raw) => {
          const meta = (raw as { metadata: { name: string; labels?: Record<string, string> } }).metadata;
          return { name: meta.name, labels: meta.labels ?? {} };
        },
        keyOf: (n) => n.name,
        clock: systemClock,
        backoffMaxMs: 1000,
      },
      {
        upsert: (n) => void held.set(n.name, n.labels),
        remove: (key) => void held.delete(key),
        synced: () => { synced = true; },
        restarting: () => undefined,
      },
    );
    api.putNamespace('team-a', { 'conndrain.io/inject': 'enabled' });
    watch.start();
    const until = async (ok: () => boolean): Promise<void> => {
      for (let i = 0; i < 300 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(ok());
    };
    try {
      await until(() => synced && held.has('team-a'));
      api.putNamespace('team-b', { 'conndrain.io/inject': 'enabled' });
      api.putNamespace('team-a', { 'conndrain.io/inject': 'disabled' });
      await until(() => held.has('team-b') && !held.has('team-a'));
      assert.equal(held.get('team-b')?.['kubernetes.io/metadata.name'], 'team-b');
    } finally {
      await watch.stop();
    }
  });

  it('counts the bytes sent by resource and by client (User-Agent)', async () => {
    api.resetBytesSent();
    const listed = await list(`${api.url}/api/v1/pods`, 'agent-n1');
    const watcher = new Watcher(`${api.url}/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion=${listed.metadata.resourceVersion}`, 'kube-proxy');
    await new Promise((r) => setTimeout(r, 50));
    api.putPod(managedPod({ name: 'counted', nodeName: 'n1', ips: ['10.2.0.9'] }));
    // Its endpoint goes into the slices of both Services of `shop` (web, web-headless).
    await watcher.until(2);
    assert.equal(watcher.events.length, 2);
    const lineBytes = watcher.events.reduce((sum, e) => sum + Buffer.byteLength(`${JSON.stringify(e)}\n`), 0);
    const stats = api.bytesSent();
    assert.ok((stats.byClient['agent-n1']?.pods?.list ?? 0) > 0);
    assert.equal(stats.byClient['agent-n1']?.pods?.lists, 1);
    assert.equal(stats.byClient['kube-proxy']?.endpointslices?.watches, 1);
    assert.equal(stats.byClient['kube-proxy']?.endpointslices?.watch, lineBytes);
    assert.equal(stats.byResource.endpointslices.watch, lineBytes);
    assert.equal(stats.total, stats.byResource.pods.list + lineBytes);
    const control = (await (await fetch(`${api.url}/stand-in/stats`)).json()) as { bytesSent: { total: number } };
    assert.equal(control.bytesSent.total, stats.total);
    watcher.close();
  });
});
