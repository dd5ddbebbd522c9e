/**
 * The stand-in's EndpointSlice controller, driven through the server's programmatic API (no
 * HTTP): slices per family, at most 100 endpoints each with stable placement, conditions,
 * pods leaving, labels, placeholders, and selector changes on either side.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer, type JsonObject } from './server.js';
import { managedPod, markDeleting, setReady } from './pods.js';
import { service } from './cluster-objects.js';
import { LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER } from './endpointslice-controller.js';

interface Slice {
  metadata: { name: string; namespace: string; generateName: string; resourceVersion: string; labels: Record<string, string>; ownerReferences: Array<{ kind: string; name: string; uid: string }> };
  addressType: string;
  endpoints: Array<{ addresses: string[]; conditions: { ready: boolean; serving: boolean; terminating: boolean }; nodeName?: string; targetRef: { kind: string; name: string; namespace: string; uid: string } }> | null;
  ports?: Array<{ name: string; port: number; protocol: string }>;
}

const ip4 = (i: number): string => `10.1.${i >> 8}.${i & 255}`;
const ip6 = (i: number): string => `fd00::${i.toString(16)}`;

function slicesOf(api: FakeApiServer, svc: string, namespace = 'shop'): Slice[] {
  return (api.listEndpointSlices() as unknown as Slice[]).filter((s) => s.metadata.namespace === namespace && s.metadata.labels[LABEL_SERVICE_NAME] === svc);
}

function endpointNames(slices: Slice[], family = 'IPv4'): string[] {
  return slices.filter((s) => s.addressType === family).flatMap((s) => (s.endpoints ?? []).map((e) => e.targetRef.name)).sort();
}

function shopService(extra: Partial<Parameters<typeof service>[0]> = {}): JsonObject {
  return service({ name: 'web', namespace: 'shop', selector: { app: 'shop' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...extra });
}

function dualStack(svc: JsonObject): JsonObject {
  (svc.spec as Record<string, unknown>).ipFamilies = ['IPv4', 'IPv6'];
  return svc;
}

describe('EndpointSlice controller (stand-in)', () => {
  it('makes an endpoint per selected pod with an IP: conditions, targetRef, nodeName, ports, labels, owner', () => {
    const api = new FakeApiServer();
    api.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: [ip4(1)] }));
    api.putPod(managedPod({ name: 'b', nodeName: 'n2', ips: [ip4(2)], ready: false }));
    const deleting = managedPod({ name: 'c', nodeName: 'n1', ips: [ip4(3)] });
    markDeleting(deleting, 30);
    api.putPod(deleting);
    api.putPod(managedPod({ name: 'other', nodeName: 'n1', ips: [ip4(4)], app: 'other' }));
    api.putPod(managedPod({ name: 'elsewhere', namespace: 'bank', nodeName: 'n1', ips: [ip4(5)] }));
    const svc = api.putService(shopService({ labels: { team: 'shop' } }));
    const [slice, ...more] = slicesOf(api, 'web');
    assert.equal(more.length, 0);
    assert.ok(slice);
    assert.equal(slice.addressType, 'IPv4');
    assert.match(slice.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.equal(slice.metadata.generateName, 'web-');
    assert.deepEqual(slice.metadata.labels, { team: 'shop', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER });
    assert.deepEqual(slice.metadata.ownerReferences.map((o) => [o.kind, o.name, o.uid]), [['Service', 'web', svc.metadata?.uid]]);
    assert.deepEqual(slice.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    const byName = new Map((slice.endpoints ?? []).map((e) => [e.targetRef.name, e]));
    assert.deepEqual([...byName.keys()].sort(), ['a', 'b', 'c']);
    assert.deepEqual(byName.get('a')?.conditions, { ready: true, serving: true, terminating: false });
    assert.deepEqual(byName.get('b')?.conditions, { ready: false, serving: false, terminating: false });
    assert.deepEqual(byName.get('c')?.conditions, { ready: false, serving: true, terminating: true });
    const a = byName.get('a');
    assert.deepEqual(a?.addresses, [ip4(1)]);
    assert.equal(a?.nodeName, 'n1');
    assert.equal(a?.targetRef.uid, api.getPod('shop', 'a')?.metadata?.uid);
    assert.ok(a?.targetRef.uid);
  });

  it('follows pods: ready flips, deletion marks, terminal phases and deletes leave; unchanged pods write nothing', () => {
    const api = new FakeApiServer();
    api.putService(shopService());
    api.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: [ip4(1)] }));
    api.putPod(managedPod({ name: 'b', nodeName: 'n1', ips: [ip4(2)] }));
    const conditions = (name: string): unknown => slicesOf(api, 'web')[0]?.endpoints?.find((e) => e.targetRef.name === name)?.conditions;
    api.modifyPod('shop', 'a', (p) => setReady(p, false));
    assert.deepEqual(conditions('a'), { ready: false, serving: false, terminating: false });
    api.modifyPod('shop', 'a', (p) => setReady(p, true));
    const rv = slicesOf(api, 'web')[0]?.metadata.resourceVersion;
    // A change the endpoint does not show (an annotation): no slice write.
    api.modifyPod('shop', 'a', (p) => { (p.metadata as Record<string, unknown>).annotations = { x: 'y' }; });
    assert.equal(slicesOf(api, 'web')[0]?.metadata.resourceVersion, rv);
    api.modifyPod('shop', 'a', (p) => markDeleting(p, 30));
    assert.deepEqual(conditions('a'), { ready: false, serving: true, terminating: true });
    api.modifyPod('shop', 'b', (p) => { (p.status as Record<string, unknown>).phase = 'Succeeded'; });
    assert.deepEqual(endpointNames(slicesOf(api, 'web')), ['a']);
    api.deletePod('shop', 'a');
    // No endpoints: one placeholder slice (no endpoints, no ports), as the real controller.
    const slices = slicesOf(api, 'web');
    assert.equal(slices.length, 1);
    assert.equal(slices[0]?.endpoints, null);
    assert.equal(slices[0]?.ports, undefined);
    // The placeholder is reused by the next endpoint.
    const placeholder = slices[0]?.metadata.name;
    api.putPod(managedPod({ name: 'c', nodeName: 'n1', ips: [ip4(3)] }));
    assert.deepEqual(slicesOf(api, 'web').map((s) => [s.metadata.name, endpointNames([s])]), [[placeholder, ['c']]]);
  });

  it('keeps a slice per address family of a dual-stack Service; a single-stack Service takes its family only', () => {
    const api = new FakeApiServer();
    api.putService(dualStack(shopService()));
    api.putService(shopService({ name: 'web4' }));
    api.putPod(managedPod({ name: 'dual', nodeName: 'n1', ips: [ip4(1), ip6(1)] }));
    api.putPod(managedPod({ name: 'v6', nodeName: 'n1', ips: [ip6(2)] }));
    const slices = slicesOf(api, 'web');
    assert.deepEqual(slices.map((s) => s.addressType).sort(), ['IPv4', 'IPv6']);
    assert.deepEqual(endpointNames(slices, 'IPv4'), ['dual']);
    assert.deepEqual(endpointNames(slices, 'IPv6'), ['dual', 'v6']);
    assert.deepEqual(slices.find((s) => s.addressType === 'IPv6')?.endpoints?.find((e) => e.targetRef.name === 'dual')?.addresses, [ip6(1)]);
    assert.deepEqual(slicesOf(api, 'web4').map((s) => [s.addressType, endpointNames([s])]), [['IPv4', ['dual']]]);
  });

  it('holds at most 100 endpoints a slice, keeps endpoints where they are and fills slices with room', () => {
    const api = new FakeApiServer();
    api.putService(shopService());
    for (let i = 0; i < 250; i++) api.putPod(managedPod({ name: `p${i}`, nodeName: 'n1', ips: [ip4(i)] }));
    const placement = (): Map<string, string> => new Map(slicesOf(api, 'web').flatMap((s) => (s.endpoints ?? []).map((e) => [e.targetRef.name, s.metadata.name] as const)));
    let slices = slicesOf(api, 'web');
    assert.deepEqual(slices.map((s) => s.endpoints?.length).sort(), [100, 100, 50]);
    const before = placement();
    // Churn: pods leave from the first slice, new ones come, others change.
    for (let i = 0; i < 30; i++) api.deletePod('shop', `p${i}`);
    for (let i = 250; i < 300; i++) api.putPod(managedPod({ name: `p${i}`, nodeName: 'n1', ips: [ip4(i)] }));
    for (let i = 100; i < 130; i++) api.modifyPod('shop', `p${i}`, (p) => setReady(p, false));
    const after = placement();
    for (const [name, slice] of before) if (after.has(name)) assert.equal(after.get(name), slice, `${name} stayed in its slice`);
    slices = slicesOf(api, 'web');
    assert.equal(slices.length, 3);
    assert.ok(slices.every((s) => (s.endpoints?.length ?? 0) <= 100));
    assert.equal(after.size, 270);
    // The new pods went into the slices with room (the first one's 30 places, then the third).
    const first = before.get('p30');
    assert.equal([...after].filter(([name, slice]) => Number(name.slice(1)) >= 250 && slice === first).length, 30);
    // A slice emptied while others hold endpoints is deleted.
    for (let i = 30; i < 100; i++) api.deletePod('shop', `p${i}`);
    for (let i = 250; i < 280; i++) api.deletePod('shop', `p${i}`);
    assert.equal(slicesOf(api, 'web').length, 2);
    assert.ok(!slicesOf(api, 'web').some((s) => s.metadata.name === first));
  });

  it('labels a headless Service\'s slices and copies label changes; a selector change moves pods in and out', () => {
    const api = new FakeApiServer();
    api.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: [ip4(1)], labels: { tier: 'front' } }));
    api.putPod(managedPod({ name: 'b', nodeName: 'n1', ips: [ip4(2)], labels: { tier: 'back' } }));
    api.putService(shopService({ headless: true }));
    assert.equal(slicesOf(api, 'web')[0]?.metadata.labels[LABEL_HEADLESS], '');
    assert.deepEqual(endpointNames(slicesOf(api, 'web')), ['a', 'b']);
    api.putService(shopService({ headless: true, selector: { app: 'shop', tier: 'front' }, labels: { team: 'x' } }));
    assert.deepEqual(endpointNames(slicesOf(api, 'web')), ['a']);
    assert.equal(slicesOf(api, 'web')[0]?.metadata.labels.team, 'x');
    api.putService(shopService({ headless: true, selector: { tier: 'back' } }));
    assert.deepEqual(endpointNames(slicesOf(api, 'web')), ['b']);
    assert.equal(slicesOf(api, 'web')[0]?.metadata.labels.team, undefined);
    api.deleteService('shop', 'web');
    assert.deepEqual(slicesOf(api, 'web'), []);
  });

  it('moves a pod whose labels change into and out of the Services that select it', () => {
    const api = new FakeApiServer();
    api.putService(shopService({ name: 'front', selector: { tier: 'front' } }));
    api.putService(shopService({ name: 'back', selector: { tier: 'back' } }));
    api.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: [ip4(1)], labels: { tier: 'front' } }));
    assert.deepEqual(endpointNames(slicesOf(api, 'front')), ['a']);
    assert.deepEqual(endpointNames(slicesOf(api, 'back')), []);
    const writes = api.sliceController.stats.writes;
    api.modifyPod('shop', 'a', (p) => { (p.metadata as { labels: Record<string, string> }).labels.tier = 'back'; });
    assert.deepEqual(endpointNames(slicesOf(api, 'front')), []);
    assert.deepEqual(endpointNames(slicesOf(api, 'back')), ['a']);
    // Only the two Services' slices were written (front: emptied -> placeholder; back: placeholder reused).
    assert.ok(api.sliceController.stats.writes - writes <= 2, `writes ${api.sliceController.stats.writes - writes}`);
  });

  it('gives every pod a uid', () => {
    const api = new FakeApiServer();
    const a = api.putPod(managedPod({ name: 'a', nodeName: 'n1', ips: [ip4(1)] }));
    const b = api.putPod(managedPod({ name: 'b', nodeName: 'n1', ips: [ip4(2)] }));
    assert.ok(a.metadata?.uid);
    assert.notEqual(a.metadata?.uid, b.metadata?.uid);
    assert.equal(api.modifyPod('shop', 'a', () => undefined).metadata?.uid, a.metadata?.uid);
  });
});
