import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markFlushed, planPod, type PlanAction, type PodPlan, type PodRecord } from './drain-plan.js';
import { viewPod } from './pod/view.js';
import type { PodLike } from './pod/pod-like.js';
import type { PodView } from './pod/view.js';

const SLACK = 2_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

interface PodOpts {
  uid?: string;
  ip?: string;
  ips?: string[];
  ready?: boolean;
  deletedAt?: number;
  phase?: string;
  hostNetwork?: boolean;
}

function pod(name: string, o: PodOpts = {}): PodView {
  const ips = o.ips ?? [o.ip ?? '10.0.0.1'];
  const raw: PodLike = {
    metadata: {
      name,
      namespace: 'shop',
      uid: o.uid ?? `uid-${name}`,
      ...(o.deletedAt === undefined ? {} : { deletionTimestamp: new Date(o.deletedAt).toISOString() }),
    },
    spec: { nodeName: 'node-a', ...(o.hostNetwork === true ? { hostNetwork: true } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      podIP: ips[0],
      podIPs: ips.map((ip) => ({ ip })),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
  return viewPod(raw, SLACK);
}

/** No other pod holds any IP. */
const noHolder = (): undefined => undefined;

/** One pod planned at `at`, from its previous record. */
function plan(view: PodView | undefined, previous: PodRecord | undefined, at: number, liveHolder: (ip: string, exceptUid: string) => string | undefined = noHolder): PodPlan {
  return planPod({ pod: view, previous, nowMs: at, liveHolder });
}

/** One pod through a sequence of observations, each at its own time (the fake clock), each from the record the last one left. */
function run(steps: Array<{ at: number; pod: PodView | undefined }>, start?: PodRecord): PodPlan[] {
  let previous = start;
  const plans: PodPlan[] = [];
  for (const step of steps) {
    const one = plan(step.pod, previous, step.at);
    plans.push(one);
    previous = one.record;
  }
  return plans;
}

const kinds = (actions: readonly PlanAction[]): string[] => actions.map((a) => `${a.kind}:${a.key}${a.kind === 'release' ? `:${a.why}` : ''}${a.kind === 'skip-reused' ? `:${a.ip}` : ''}`).sort();

test('the states of the contract, step by step, with a fake clock', () => {
  const cases: Array<{ name: string; pod: PodView; at: number; state: string; reason: string }> = [
    { name: 'ready pod serves', pod: pod('a'), at: T0, state: 'serving', reason: 'ready' },
    { name: 'unready pod drains', pod: pod('a', { ready: false }), at: T0, state: 'draining', reason: 'not-ready' },
    { name: 'deleting but still Ready drains', pod: pod('a', { deletedAt: T0 + 30_000 }), at: T0, state: 'draining', reason: 'deleting' },
    { name: 'deleting, grace not yet elapsed (slack counts)', pod: pod('a', { deletedAt: T0 + 30_000 }), at: T0 + 30_000 + SLACK - 1, state: 'draining', reason: 'deleting' },
    { name: 'deletionTimestamp + slack elapsed: gone', pod: pod('a', { deletedAt: T0 + 30_000 }), at: T0 + 30_000 + SLACK, state: 'gone', reason: 'grace-elapsed' },
    { name: 'terminal phase: gone', pod: pod('a', { phase: 'Succeeded' }), at: T0, state: 'gone', reason: 'terminal' },
  ];
  for (const c of cases) {
    const rec = plan(c.pod, undefined, c.at).record;
    assert.equal(rec?.state, c.state, c.name);
    assert.equal(rec?.reason, c.reason, c.name);
  }
});

test('a pod that flaps: hold on every unready spell, release (serving) on every recovery', () => {
  const plans = run([
    { at: T0, pod: pod('a') },
    { at: T0 + 1000, pod: pod('a', { ready: false }) },
    { at: T0 + 2000, pod: pod('a') },
    { at: T0 + 3000, pod: pod('a', { ready: false }) },
    { at: T0 + 4000, pod: pod('a', { ready: false }) },
  ]);
  assert.deepEqual(plans.map((p) => p.record?.state), ['serving', 'draining', 'serving', 'draining', 'draining']);
  assert.deepEqual(plans.map((p) => p.keep), [false, true, false, true, true], 'serving pods have nothing to resume');
  assert.deepEqual(kinds(plans[0]!.actions), []);
  assert.deepEqual(kinds(plans[1]!.actions), ['hold:shop/a']);
  assert.deepEqual(kinds(plans[2]!.actions), ['release:shop/a:serving']);
  assert.deepEqual(kinds(plans[3]!.actions), ['hold:shop/a']);
  assert.deepEqual(kinds(plans[4]!.actions), ['hold:shop/a'], 'hold is desired state: repeated while draining');
  assert.equal(plans[4]!.record?.sinceMs, T0 + 3000, 'sinceMs is when the state began');
  const t = plans[3]!.transition;
  assert.equal(t === undefined ? undefined : `${t.from}->${t.to}:${t.reason}:${String(t.wasReady)}`, 'serving->draining:not-ready:true');
  assert.equal(plans[4]!.transition, undefined);
});

test('a draining pod that is deleted: release (gone), flush; flushed once marked; forgotten once absent', () => {
  const [, , gone] = run([
    { at: T0, pod: pod('a', { ready: false }) },
    { at: T0 + 1000, pod: pod('a', { ready: false, deletedAt: T0 + 5000 }) },
    { at: T0 + 2000, pod: undefined },
  ]);
  assert.equal(gone!.record?.state, 'gone');
  assert.equal(gone!.record?.reason, 'deleted');
  assert.deepEqual(kinds(gone!.actions), ['flush:shop/a', 'release:shop/a:gone']);
  // Still gone (not flushed) on the next run: flush is asked for again, release is not.
  const again = plan(undefined, gone!.record, T0 + 3000);
  assert.deepEqual(kinds(again.actions), ['flush:shop/a']);
  assert.equal(again.transition, undefined);
  const flushed = markFlushed(new Map([['uid-a', again.record!]]), 'uid-a', T0 + 3500).get('uid-a');
  assert.equal(flushed?.state, 'flushed');
  const after = plan(undefined, flushed, T0 + 4000);
  assert.equal(after.record, undefined);
  assert.equal(after.keep, false);
  assert.deepEqual(after.actions, []);
});

test('markFlushed leaves unknown and not-gone pods as they are', () => {
  const draining = plan(pod('a', { ready: false }), undefined, T0).record!;
  const records = new Map([['uid-a', draining]]);
  assert.deepEqual(markFlushed(records, 'uid-a', T0 + 1), records);
  assert.deepEqual(markFlushed(records, 'uid-x', T0 + 1), records);
});

test('a flushed pod still listed (past its grace) stays flushed and is not flushed again', () => {
  const deleting = pod('a', { deletedAt: T0 });
  const [first] = run([{ at: T0 + SLACK, pod: deleting }]);
  assert.deepEqual(kinds(first!.actions), ['flush:shop/a']);
  const flushed = markFlushed(new Map([['uid-a', first!.record!]]), 'uid-a', T0 + SLACK).get('uid-a');
  const later = plan(deleting, flushed, T0 + 60_000);
  assert.equal(later.record?.state, 'flushed');
  assert.equal(later.keep, true, 'kept while the API still lists it');
  assert.deepEqual(later.actions, []);
});

test('a pod deleted while the agent was down: in the state file, absent from the first list', () => {
  const old: PodRecord = { uid: 'uid-old', key: 'shop/old', nodeName: 'node-a', ips: ['10.0.0.9'], state: 'draining', sinceMs: T0 - 60_000, wasReady: true, reason: 'deleting' };
  const idle: PodRecord = { uid: 'uid-idle', key: 'shop/idle', nodeName: 'node-b', ips: ['10.0.0.8'], state: 'serving', sinceMs: T0 - 60_000, wasReady: true, reason: 'ready' };
  const oldPlan = plan(undefined, old, T0);
  const idlePlan = plan(undefined, idle, T0);
  assert.deepEqual([oldPlan.record?.state, idlePlan.record?.state], ['gone', 'gone']);
  assert.deepEqual(kinds(oldPlan.actions), ['flush:shop/old', 'release:shop/old:gone']);
  assert.deepEqual(kinds(idlePlan.actions), ['flush:shop/idle']);
  const flush = oldPlan.actions.find((a) => a.kind === 'flush');
  assert.deepEqual(flush?.kind === 'flush' ? flush.ips : null, ['10.0.0.9']);
  assert.equal(oldPlan.record?.sinceMs, T0);
});

test('a reused IP: never flushed while a live pod holds it, the other IPs are', () => {
  const [old] = run([{ at: T0, pod: pod('old', { ips: ['10.0.0.5', 'fd00::5'], ready: false }) }]);
  // old is deleted; new pod already got 10.0.0.5 (IPAM reuse).
  const holder = (ip: string, exceptUid: string): string | undefined => (ip === '10.0.0.5' && exceptUid !== 'uid-new' ? 'shop/new' : undefined);
  const gone = plan(undefined, old!.record, T0 + 1000, holder);
  assert.deepEqual(kinds(gone.actions), ['flush:shop/old', 'release:shop/old:gone', 'skip-reused:shop/old:10.0.0.5']);
  const flush = gone.actions.find((a) => a.kind === 'flush');
  assert.deepEqual(flush?.kind === 'flush' ? flush.ips : null, ['fd00::5']);
  const skip = gone.actions.find((a) => a.kind === 'skip-reused');
  assert.equal(skip?.kind === 'skip-reused' ? skip.holder : null, 'shop/new');
});

test('a pod recreated under the same name is a new pod (keyed by uid); the old one yields its IP to it', () => {
  const [first] = run([{ at: T0, pod: pod('web-0', { uid: 'u1', ip: '10.0.0.7' }) }]);
  const fresh = plan(pod('web-0', { uid: 'u2', ip: '10.0.0.7' }), undefined, T0 + 1000);
  assert.equal(fresh.record?.state, 'serving');
  const holder = (ip: string, exceptUid: string): string | undefined => (ip === '10.0.0.7' && exceptUid !== 'u2' ? 'shop/web-0' : undefined);
  const old = plan(undefined, first!.record, T0 + 1000, holder);
  assert.equal(old.record?.state, 'gone');
  assert.deepEqual(kinds(old.actions), ['flush:shop/web-0', 'skip-reused:shop/web-0:10.0.0.7']);
});

test('gone is final: a gone pod that reappears Ready does not serve again', () => {
  const [, again] = run([
    { at: T0 + SLACK, pod: pod('a', { deletedAt: T0 }) },
    { at: T0 + SLACK + 1, pod: pod('a') },
  ]);
  assert.equal(again!.record?.state, 'gone');
});

test('a never-ready pod drains per the design but was never Ready (no event-worthy drain); host-network pods own no IP', () => {
  const starting = plan(pod('starting', { ready: false }), undefined, T0);
  const hostnet = plan(pod('hostnet', { hostNetwork: true, ip: '192.168.1.10', ready: false }), undefined, T0);
  assert.equal(starting.transition?.wasReady, false);
  assert.deepEqual(hostnet.record?.ips, []);
  assert.deepEqual(kinds(starting.actions), ['hold:shop/starting']);
  assert.deepEqual(kinds(hostnet.actions), [], 'no hold for a pod without IPs');
});
