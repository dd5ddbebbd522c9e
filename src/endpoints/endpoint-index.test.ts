import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointIndex } from './endpoint-index.js';
import { viewSlice, type RawSlice } from './slice-view.js';
import { unpackIpv4 } from '../store/ipv4.js';

/** Each owned target as `address protocol port` (a group: one per address). */
function spelled(t: ReturnType<EndpointIndex['ownedTargets']>[number]): string[] {
  const addresses = 'address' in t ? [t.address] : [...t.ipv4].map(unpackIpv4);
  return addresses.map((a) => `${a} ${t.protocol ?? '-'} ${t.port ?? '-'}`);
}

function slice(name: string, o: { namespace?: string; service?: string; family?: string; ports?: Array<[number, string]>; labels?: Record<string, string>; endpoints: Array<{ uid: string; ip: string; serving?: boolean; terminating?: boolean; ready?: boolean; node?: string }> }): RawSlice {
  const namespace = o.namespace ?? 'shop';
  return {
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': o.service ?? 'web', ...o.labels } },
    addressType: o.family ?? 'IPv4',
    ports: (o.ports ?? [[8080, 'TCP']]).map(([port, protocol]) => ({ port, protocol })),
    endpoints: o.endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? ((e.serving ?? true) && !(e.terminating ?? false)), serving: e.serving ?? true, terminating: e.terminating ?? false },
      nodeName: e.node ?? 'node-b',
      targetRef: { kind: 'Pod', namespace, name: `pod-${e.uid}`, uid: e.uid },
    })),
  };
}

test('viewSlice: serving defaults to ready, ready to true; protocols lower-cased; the flow-pinning label', () => {
  const v = viewSlice({ metadata: { name: 's', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'svc', 'conndrain.io/flow-pinning': 'off' } }, ports: [{ port: 53, protocol: 'UDP' }, { port: null }], endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: false } }, { addresses: ['10.0.0.2'], conditions: {} }, { addresses: [] }] });
  assert.equal(v.service, 'ns/svc');
  assert.deepEqual(v.ports, [{ port: 53, protocol: 'udp' }]);
  assert.deepEqual(v.endpoints.map((e) => [e.serving, e.terminating]), [[false, false], [true, false]]);
  assert.equal(v.endpoints.length, 2, 'an endpoint without an address is dropped');
  assert.equal(v.flowPinningOff, true);
});

test('merged per uid over several Services and both families; draining = terminating or not serving (never !ready)', () => {
  const index = new EndpointIndex(() => true);
  index.upsert(viewSlice(slice('web-a', { endpoints: [{ uid: 'u1', ip: '10.1.0.1' }] })));
  index.upsert(viewSlice(slice('api-a', { service: 'api', ports: [[9090, 'TCP'], [53, 'UDP']], endpoints: [{ uid: 'u1', ip: '10.1.0.1' }] })));
  index.upsert(viewSlice(slice('web-6', { family: 'IPv6', endpoints: [{ uid: 'u1', ip: 'FD00::1' }] })));
  const m = index.merged('u1');
  assert.deepEqual(m?.addresses, ['10.1.0.1', 'fd00::1']);
  assert.deepEqual(m?.targets.map((t) => `${t.protocol}/${t.address}/${t.port}`).sort(), ['tcp/10.1.0.1/8080', 'tcp/10.1.0.1/9090', 'tcp/fd00::1/8080', 'udp/10.1.0.1/53']);
  assert.equal(m?.draining, false);
  // publishNotReadyAddresses: terminating but ready: draining all the same.
  index.upsert(viewSlice(slice('api-a', { service: 'api', endpoints: [{ uid: 'u1', ip: '10.1.0.1', terminating: true, ready: true }] })));
  assert.equal(index.merged('u1')?.draining, true);
  assert.equal(index.merged('u1')?.terminating, true);
  index.upsert(viewSlice(slice('api-a', { service: 'api', endpoints: [{ uid: 'u1', ip: '10.1.0.1', serving: false }] })));
  assert.equal(index.merged('u1')?.draining, true);
  assert.equal(index.merged('u1')?.terminating, false);
});

test('an endpoint moving between slices stays known; removal touches its uid; address holders counted', () => {
  const index = new EndpointIndex(() => true);
  index.upsert(viewSlice(slice('web-a', { endpoints: [{ uid: 'u1', ip: '10.1.0.1' }, { uid: 'u2', ip: '10.1.0.2' }] })));
  index.upsert(viewSlice(slice('web-b', { endpoints: [{ uid: 'u2', ip: '10.1.0.2' }] })));
  const touched = index.upsert(viewSlice(slice('web-a', { endpoints: [{ uid: 'u1', ip: '10.1.0.1' }] })));
  assert.deepEqual([...touched].sort(), ['u2'], 'u1 unchanged in web-a: not touched');
  assert.ok(index.merged('u2') !== undefined, 'still in web-b');
  assert.deepEqual([...(index.holdersOf('10.1.0.2')?.keys() ?? [])], ['u2']);
  index.remove('shop/web-b');
  assert.equal(index.merged('u2'), undefined);
  assert.equal(index.holdersOf('10.1.0.2'), undefined);
  assert.equal(index.endpointCount, 1);
});

test('slices of namespaces not opted in merge to nothing but their addresses still count as held', () => {
  const opted = new Set(['shop']);
  const index = new EndpointIndex((ns) => opted.has(ns));
  index.upsert(viewSlice(slice('x', { namespace: 'other', endpoints: [{ uid: 'u9', ip: '10.9.0.9' }] })));
  assert.equal(index.merged('u9'), undefined);
  assert.ok(index.holdersOf('10.9.0.9') !== undefined);
  opted.add('other');
  assert.deepEqual([...index.uidsOfNamespace('other')], ['u9']);
  assert.ok(index.merged('u9') !== undefined);
});

test('a readiness flip in a big slice touches that endpoint only', () => {
  const index = new EndpointIndex(() => true);
  const many = Array.from({ length: 100 }, (_, i) => ({ uid: `u${i}`, ip: `10.2.0.${i}` }));
  index.upsert(viewSlice(slice('big', { endpoints: many })));
  const flipped = many.map((e, i) => (i === 42 ? { ...e, serving: false } : e));
  assert.deepEqual([...index.changedBy(viewSlice(slice('big', { endpoints: flipped })))], ['u42']);
  assert.deepEqual([...index.changedBy(viewSlice(slice('big', { endpoints: many.slice(1) })))], ['u0'], 'a removal');
  assert.equal(index.changedBy(viewSlice(slice('big', { endpoints: many, ports: [[9090, 'TCP']] }))).size, 100, 'ports changed: all');
});

test('ownership for the restart sweep: owns by address, port and protocol; a slice without ports owns every port', () => {
  const index = new EndpointIndex(() => false);
  index.upsert(viewSlice(slice('dns', { service: 'dns', ports: [[53, 'UDP']], endpoints: [{ uid: 'u1', ip: '10.3.0.1' }] })));
  index.upsert(viewSlice({ metadata: { name: 'raw', namespace: 'x' }, ports: [], endpoints: [{ addresses: ['10.3.0.2'], targetRef: { uid: 'u2' } }] }));
  assert.equal(index.owns('udp', '10.3.0.1', 53), true);
  assert.equal(index.owns('tcp', '10.3.0.1', 53), false);
  assert.equal(index.owns('udp', '10.3.0.1', 54), false);
  assert.equal(index.owns('tcp', '10.3.0.2', 9999), true);
  assert.equal(index.owns('udp', '10.3.0.9', 53), false);
  assert.equal(index.serviceOf('udp', '10.3.0.1', 53), 'shop/dns');
  assert.deepEqual(index.ownedTargets().flatMap(spelled).sort(), ['10.3.0.1 udp 53', '10.3.0.2 - -']);
  // A slice's IPv4 endpoints go as one Int32Array per port, others (IPv6) one by one.
  index.upsert(viewSlice(slice('web', { service: 'web', ports: [[80, 'TCP'], [443, 'TCP']], endpoints: [{ uid: 'u3', ip: '10.3.0.3' }, { uid: 'u4', ip: '10.3.0.4' }] })));
  index.upsert(viewSlice(slice('web6', { service: 'web', family: 'IPv6', endpoints: [{ uid: 'u3', ip: 'fd00::3' }] })));
  const web = index.ownedTargets().filter((t) => 'ipv4' in t && t.ipv4.length === 2);
  assert.deepEqual(web.map((t) => [t.protocol, t.port]), [['tcp', 80], ['tcp', 443]]);
  assert.equal((web[0] as { ipv4: Int32Array }).ipv4, (web[1] as { ipv4: Int32Array }).ipv4, 'one array for the slice\'s ports');
  assert.deepEqual(index.ownedTargets().flatMap(spelled).sort(), ['10.3.0.1 udp 53', '10.3.0.2 - -', '10.3.0.3 tcp 443', '10.3.0.3 tcp 80', '10.3.0.4 tcp 443', '10.3.0.4 tcp 80', 'fd00::3 tcp 8080']);
});

test('a readiness flip keeps the strings the slice already had and touches only the flipped uid', () => {
  const index = new EndpointIndex(() => true);
  const many = Array.from({ length: 50 }, (_, i) => ({ uid: `u${i}`, ip: `10.4.0.${i}` }));
  index.upsert(viewSlice(slice('big', { endpoints: many })));
  const flipped = viewSlice(slice('big', { endpoints: many.map((e, i) => (i === 7 ? { ...e, serving: false } : e)) }));
  assert.deepEqual([...index.changedBy(flipped)], ['u7']);
  assert.deepEqual([...index.upsert(flipped)], ['u7']);
  assert.equal(index.merged('u7')?.draining, true);
  assert.equal(index.merged('u8')?.draining, false);
  assert.deepEqual(index.holderUids('10.4.0.7'), ['u7']);
  assert.equal(index.endpointCount, 50);
  // An address change of a kept uid moves its holder; a reordered slice changes nothing.
  const moved = viewSlice(slice('big', { endpoints: [...many].reverse().map((e, i) => (i === 0 ? { ...e, ip: '10.4.1.1' } : e)) }));
  assert.deepEqual([...index.upsert(moved)].sort(), ['u49', 'u7'], 'u49 moved address, u7 serving again');
  assert.deepEqual(index.holderUids('10.4.0.49'), []);
  assert.deepEqual(index.holderUids('10.4.1.1'), ['u49']);
  assert.equal(index.merged('u1')?.key, 'shop/pod-u1');
});

test('isDraining says what merged()?.draining says, without building the view (opted-out slices, several slices, gone)', () => {
  const optedIn = new Set(['shop']);
  const index = new EndpointIndex((ns) => optedIn.has(ns));
  index.upsert(viewSlice(slice('web-a', { endpoints: [{ uid: 'u1', ip: '10.4.0.1' }, { uid: 'u2', ip: '10.4.0.2', serving: false }, { uid: 'u3', ip: '10.4.0.3', terminating: true, ready: true }] })));
  index.upsert(viewSlice(slice('api-a', { service: 'api', endpoints: [{ uid: 'u1', ip: '10.4.0.1', serving: false }] })));
  index.upsert(viewSlice(slice('other', { namespace: 'lab', endpoints: [{ uid: 'u4', ip: '10.4.0.4', serving: false }] })));
  for (const uid of ['u1', 'u2', 'u3', 'u4', 'u5']) assert.equal(index.isDraining(uid), index.merged(uid)?.draining ?? false, uid);
  assert.deepEqual(['u1', 'u2', 'u3', 'u4', 'u5'].map((u) => index.isDraining(u)), [true, true, true, false, false]);
  // The same pod listed twice with one port (two Services on 8080) merges to one target.
  index.upsert(viewSlice(slice('web-b', { service: 'web2', endpoints: [{ uid: 'u2', ip: '10.4.0.2' }] })));
  assert.deepEqual(index.merged('u2')?.targets, [{ address: '10.4.0.2', port: 8080, protocol: 'tcp' }]);
});

test('changedBy covers what upsert touches when a slice lists one pod twice (fast-check seed -638811052 found it)', () => {
  const index = new EndpointIndex(() => true);
  const raw = (addresses: string[]): RawSlice => ({ metadata: { name: 'c', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } }, ports: [{ port: 8080, protocol: 'TCP' }], endpoints: addresses.map((a) => ({ addresses: [a], conditions: { serving: false, terminating: true } })) });
  index.upsert(viewSlice(raw(['10.0.0.3', '10.0.0.1'])));
  const twice = viewSlice(raw(['10.0.0.1', '10.0.0.1']));
  const changed = index.changedBy(twice);
  for (const uid of index.upsert(twice)) assert.ok(changed.has(uid), `changedBy missed ${uid}`);
  assert.deepEqual(index.uidsOfSlice('shop/c'), ['address/10.0.0.1', 'address/10.0.0.1']);
});
