import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MergedEndpoint } from '../../src/endpoints/endpoint-index.js';
import { EndpointPlanner } from './endpoint-planner.js';

function ep(uid: string, o: Partial<MergedEndpoint> = {}): MergedEndpoint {
  return { uid, key: `shop/${uid}`, namespace: 'shop', nodeName: 'node-b', addresses: ['10.1.0.1'], targets: [{ address: '10.1.0.1', port: 8080, protocol: 'tcp' }], draining: false, terminating: false, flowPinningOff: false, ...o };
}

const planner = (local = new Set<string>()): EndpointPlanner => new EndpointPlanner({ debounceMs: 1000, terminatingMaxMs: 60_000, isLocalPod: (uid) => local.has(uid) });

test('serving -> draining (held by its targets) -> serving again: released, no record kept', () => {
  const p = planner();
  p.changed('u1', undefined, ep('u1'), 0);
  assert.deepEqual(p.drainingPods(), []);
  p.changed('u1', ep('u1'), ep('u1', { draining: true }), 10);
  assert.deepEqual(p.drainingPods(), [{ uid: 'u1', key: 'shop/u1', ips: ['10.1.0.1'], ports: [{ port: 8080, protocol: 'tcp' }], wasReady: true, elsewhere: true }]);
  assert.equal(p.takeHoldingChanged(), true);
  p.changed('u1', ep('u1', { draining: true }), ep('u1'), 20);
  assert.deepEqual(p.drainingPods(), []);
  assert.equal(p.isServing('u1', true), true);
  assert.deepEqual(p.snapshot(), []);
});

test('gone only after the debounce; back within it: nothing flushed', () => {
  const p = planner();
  p.changed('u1', ep('u1', { draining: true }), undefined, 100);
  assert.deepEqual(p.takeDue(500), []);
  p.changed('u1', undefined, ep('u1', { draining: true }), 600); // moved to another slice
  assert.deepEqual(p.takeDue(2000), []);
  assert.equal(p.drainingPods().length, 1);
});

test('left after draining: every protocol; left while serving: UDP and SCTP only; this node\'s pods are the pod watch\'s', () => {
  const local = new Set(['mine']);
  const p = planner(local);
  p.changed('u1', ep('u1', { draining: true }), undefined, 0);
  p.changed('u2', ep('u2'), undefined, 0);
  p.changed('mine', ep('mine', { draining: true }), undefined, 0);
  const due = p.takeDue(1000);
  assert.deepEqual(due.map((f) => `${f.uid}:${f.scope}:${f.why}`), ['u1:all:left-after-draining', 'u2:udp-sctp:left-while-serving']);
});

test('terminating longer than the longest drain: gone (a dead node), flushed, not held again while still listed', () => {
  const p = planner();
  p.changed('u1', ep('u1'), ep('u1', { draining: true, terminating: true }), 0);
  assert.deepEqual(p.takeDue(59_999), []);
  const due = p.takeDue(60_000);
  assert.deepEqual(due.map((f) => f.why), ['terminating-too-long']);
  assert.deepEqual(p.drainingPods(), []);
  p.changed('u1', ep('u1', { draining: true, terminating: true }), ep('u1', { draining: true, terminating: true }), 61_000);
  assert.deepEqual(p.drainingPods(), [], 'a slice update does not bring the hold back');
  p.changed('u1', ep('u1', { draining: true, terminating: true }), undefined, 62_000);
  assert.deepEqual(p.takeDue(70_000), [], 'forgotten when it leaves: flushed once');
});

test('an opted-out endpoint is forgotten, never flushed', () => {
  const p = planner();
  p.changed('u1', ep('u1'), ep('u1', { draining: true }), 0);
  p.changed('u1', ep('u1', { draining: true }), undefined, 10, true);
  assert.deepEqual(p.drainingPods(), []);
  assert.deepEqual(p.takeDue(10_000), []);
});

test('resumed records hold what they held until the first slice list decides', () => {
  const p = planner();
  p.resume([{ uid: 'r1', key: 'shop/r1', nodeName: 'node-b', ips: ['10.1.0.9'], state: 'draining', sinceMs: 0, wasReady: true, reason: 'not-ready' }, { uid: 'r2', key: 'shop/r2', nodeName: 'node-c', ips: ['10.1.0.8'], state: 'draining', sinceMs: 0, wasReady: true, reason: 'not-ready' }]);
  assert.deepEqual(p.drainingPods().map((d) => [d.uid, d.ports]), [['r1', []], ['r2', []]], 'held, no new server');
  p.changed('r1', undefined, ep('r1', { draining: true }), 5);
  p.settleResumed((uid) => uid === 'r1', (uid) => uid === 'r1', 6);
  assert.deepEqual(p.drainingPods().map((d) => d.uid), ['r1']);
  assert.deepEqual(p.drainingPods()[0]?.ports, [{ port: 8080, protocol: 'tcp' }]);
});

test('a resumed record no slice lists any more went while no agent ran: flushed after the debounce, every protocol, any port', () => {
  const p = planner();
  p.resume([{ uid: 'r3', key: 'shop/r3', nodeName: 'node-b', ips: ['10.1.0.7'], state: 'draining', sinceMs: 0, wasReady: true, reason: 'deleting' }]);
  p.settleResumed(() => false, () => false, 100);
  assert.deepEqual(p.drainingPods(), [], 'no longer held');
  const flushes = p.takeDue(100 + 60_000);
  assert.deepEqual(flushes.map((f) => [f.uid, f.scope, f.why]), [['r3', 'all', 'left-after-draining']]);
  assert.deepEqual(flushes[0]?.targets.map((t) => `${t.protocol}/${t.address}/${t.port}`), ['tcp/10.1.0.7/0', 'udp/10.1.0.7/0', 'sctp/10.1.0.7/0']);
});

test('a new endpoint not serving yet is held as never Ready (the proxy has no server of it: no scan due at once)', () => {
  const p = planner();
  p.changed('n1', undefined, ep('n1', { draining: true }), 15);
  assert.equal(p.drainingPods()[0]?.wasReady, false);
  p.changed('s1', undefined, ep('s1'), 16);
  p.changed('s1', ep('s1'), ep('s1', { draining: true }), 17);
  assert.equal(p.drainingPods().find((d) => d.uid === 's1')?.wasReady, true);
});

test('the draining count follows every transition: draining, draining again, leaving, back, gone by time, resumed and settled', () => {
  const p = planner();
  const count = (): number => p.snapshot().length;
  p.changed('u1', ep('u1'), ep('u1', { draining: true }), 0);
  p.changed('u1', ep('u1', { draining: true }), ep('u1', { draining: true, terminating: true }), 10); // draining again: still one
  p.changed('u2', ep('u2'), ep('u2', { draining: true }), 10);
  assert.equal(p.draining, 2);
  p.changed('u2', ep('u2', { draining: true }), undefined, 20); // leaving
  assert.equal(p.draining, 1);
  p.changed('u2', undefined, ep('u2', { draining: true }), 30); // back within the debounce
  assert.equal(p.draining, 2);
  p.changed('u2', ep('u2', { draining: true }), ep('u2'), 40); // serving again
  assert.equal(p.draining, 1);
  assert.equal(p.takeDue(60_010).length, 1); // u1 terminating too long: gone
  assert.equal(p.draining, 0);
  p.resume([{ uid: 'r1', key: 'shop/r1', nodeName: 'node-b', ips: ['10.1.0.9'], state: 'draining', sinceMs: 0, wasReady: true, reason: 'not-ready' }]);
  assert.equal(p.draining, 1);
  p.settleResumed(() => false, () => false, 70_000); // listed nowhere: leaving
  assert.equal(p.draining, 0);
  assert.equal(count(), 0);
});

test('a draining pod with two addresses on the same ports (dual-stack) is held once per port, its targets once each however often the slices list them', () => {
  const p = planner();
  const dual = {
    addresses: ['10.1.0.1', 'fd00::1'],
    targets: [
      { address: '10.1.0.1', port: 8080, protocol: 'tcp' }, { address: 'fd00::1', port: 8080, protocol: 'tcp' },
      { address: '10.1.0.1', port: 53, protocol: 'udp' }, { address: 'fd00::1', port: 53, protocol: 'udp' },
    ],
  };
  p.changed('u1', ep('u1', dual), ep('u1', { ...dual, draining: true }), 10);
  p.changed('u1', ep('u1', { ...dual, draining: true }), ep('u1', { ...dual, draining: true, terminating: true }), 20);
  assert.deepEqual(p.drainingPods().map((d) => d.ports), [[{ port: 8080, protocol: 'tcp' }, { port: 53, protocol: 'udp' }]]);
  p.changed('u1', ep('u1', { ...dual, draining: true, terminating: true }), undefined, 30);
  const due = p.takeDue(2000);
  assert.deepEqual(due.map((f) => f.targets), [dual.targets]);
});
