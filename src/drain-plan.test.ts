import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markFlushed, planDrains, type Plan, type PodRecord } from './drain-plan.js';
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

/** Runs the plan through a sequence of observations, each at its own time (the fake clock). */
function run(steps: Array<{ at: number; pods: PodView[] }>, start: ReadonlyMap<string, PodRecord> = new Map()): Plan[] {
  let previous = start;
  const plans: Plan[] = [];
  for (const step of steps) {
    const plan = planDrains({ pods: step.pods, previous, nowMs: step.at });
    plans.push(plan);
    previous = plan.records;
  }
  return plans;
}

const states = (plan: Plan): Record<string, string> => Object.fromEntries([...plan.records.values()].map((r) => [r.key, r.state]));
const kinds = (plan: Plan): string[] => plan.actions.map((a) => `${a.kind}:${a.key}${a.kind === 'release' ? `:${a.why}` : ''}${a.kind === 'skip-reused' ? `:${a.ip}` : ''}`).sort();

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
    const plan = planDrains({ pods: [c.pod], previous: new Map(), nowMs: c.at });
    const rec = plan.records.get('uid-a');
    assert.equal(rec?.state, c.state, c.name);
    assert.equal(rec?.reason, c.reason, c.name);
  }
});

test('a pod that flaps: hold on every unready spell, release (serving) on every recovery', () => {
  const plans = run([
    { at: T0, pods: [pod('a')] },
    { at: T0 + 1000, pods: [pod('a', { ready: false })] },
    { at: T0 + 2000, pods: [pod('a')] },
    { at: T0 + 3000, pods: [pod('a', { ready: false })] },
    { at: T0 + 4000, pods: [pod('a', { ready: false })] },
  ]);
  assert.deepEqual(plans.map((p) => states(p)['shop/a']), ['serving', 'draining', 'serving', 'draining', 'draining']);
  assert.deepEqual(kinds(plans[0]!), []);
  assert.deepEqual(kinds(plans[1]!), ['hold:shop/a']);
  assert.deepEqual(kinds(plans[2]!), ['release:shop/a:serving']);
  assert.deepEqual(kinds(plans[3]!), ['hold:shop/a']);
  assert.deepEqual(kinds(plans[4]!), ['hold:shop/a'], 'hold is desired state: repeated while draining');
  assert.equal(plans[4]!.records.get('uid-a')?.sinceMs, T0 + 3000, 'sinceMs is when the state began');
  assert.deepEqual(plans[3]!.transitions.map((t) => `${t.from}->${t.to}:${t.reason}:${String(t.wasReady)}`), ['serving->draining:not-ready:true']);
  assert.deepEqual(plans[4]!.transitions, []);
});

test('a draining pod that is deleted: release (gone), flush; flushed once marked; forgotten once absent', () => {
  const [, , gone] = run([
    { at: T0, pods: [pod('a', { ready: false })] },
    { at: T0 + 1000, pods: [pod('a', { ready: false, deletedAt: T0 + 5000 })] },
    { at: T0 + 2000, pods: [] },
  ]);
  assert.equal(states(gone!)['shop/a'], 'gone');
  assert.equal(gone!.records.get('uid-a')?.reason, 'deleted');
  assert.deepEqual(kinds(gone!), ['flush:shop/a', 'release:shop/a:gone']);
  // Still gone (not flushed) on the next run: flush is asked for again, release is not.
  const again = planDrains({ pods: [], previous: gone!.records, nowMs: T0 + 3000 });
  assert.deepEqual(kinds(again), ['flush:shop/a']);
  const flushed = markFlushed(again.records, 'uid-a', T0 + 3500);
  assert.equal(flushed.get('uid-a')?.state, 'flushed');
  const after = planDrains({ pods: [], previous: flushed, nowMs: T0 + 4000 });
  assert.equal(after.records.size, 0);
  assert.deepEqual(after.actions, []);
});

test('a flushed pod still listed (past its grace) stays flushed and is not flushed again', () => {
  const deleting = pod('a', { deletedAt: T0 });
  const [first] = run([{ at: T0 + SLACK, pods: [deleting] }]);
  assert.deepEqual(kinds(first!), ['flush:shop/a']);
  const flushed = markFlushed(first!.records, 'uid-a', T0 + SLACK);
  const later = planDrains({ pods: [deleting], previous: flushed, nowMs: T0 + 60_000 });
  assert.equal(states(later)['shop/a'], 'flushed');
  assert.deepEqual(later.actions, []);
});

test('a pod deleted while the agent was down: in the state file, absent from the first list', () => {
  const stateFile = new Map<string, PodRecord>([
    ['uid-old', { uid: 'uid-old', key: 'shop/old', nodeName: 'node-a', ips: ['10.0.0.9'], state: 'draining', sinceMs: T0 - 60_000, wasReady: true, reason: 'deleting' }],
    ['uid-idle', { uid: 'uid-idle', key: 'shop/idle', nodeName: 'node-b', ips: ['10.0.0.8'], state: 'serving', sinceMs: T0 - 60_000, wasReady: true, reason: 'ready' }],
  ]);
  const [plan] = run([{ at: T0, pods: [pod('b', { ip: '10.0.0.2' })] }], stateFile);
  assert.deepEqual(states(plan!), { 'shop/old': 'gone', 'shop/idle': 'gone', 'shop/b': 'serving' });
  assert.deepEqual(kinds(plan!), ['flush:shop/idle', 'flush:shop/old', 'release:shop/old:gone']);
  const flush = plan!.actions.find((a) => a.kind === 'flush' && a.key === 'shop/old');
  assert.deepEqual(flush?.kind === 'flush' ? flush.ips : null, ['10.0.0.9']);
});

test('a reused IP: never flushed while a live pod holds it, the other IPs are', () => {
  const [, plan] = run([
    { at: T0, pods: [pod('old', { ips: ['10.0.0.5', 'fd00::5'], ready: false })] },
    // old is deleted; new pod already got 10.0.0.5 (IPAM reuse), and is itself draining.
    { at: T0 + 1000, pods: [pod('new', { ip: '10.0.0.5', ready: false })] },
  ]);
  assert.deepEqual(kinds(plan!), ['flush:shop/old', 'hold:shop/new', 'release:shop/old:gone', 'skip-reused:shop/old:10.0.0.5']);
  const flush = plan!.actions.find((a) => a.kind === 'flush');
  assert.deepEqual(flush?.kind === 'flush' ? flush.ips : null, ['fd00::5']);
  const skip = plan!.actions.find((a) => a.kind === 'skip-reused');
  assert.equal(skip?.kind === 'skip-reused' ? skip.holder : null, 'shop/new');
});

test('a pod recreated under the same name is a new pod (keyed by uid)', () => {
  const [, plan] = run([
    { at: T0, pods: [pod('web-0', { uid: 'u1', ip: '10.0.0.7' })] },
    { at: T0 + 1000, pods: [pod('web-0', { uid: 'u2', ip: '10.0.0.7' })] },
  ]);
  assert.equal(plan!.records.get('u1')?.state, 'gone');
  assert.equal(plan!.records.get('u2')?.state, 'serving');
  assert.deepEqual(kinds(plan!), ['flush:shop/web-0', 'skip-reused:shop/web-0:10.0.0.7']);
});

test('gone is final: a gone pod that reappears Ready does not serve again', () => {
  const [, plan] = run([
    { at: T0 + SLACK, pods: [pod('a', { deletedAt: T0 })] },
    { at: T0 + SLACK + 1, pods: [pod('a')] },
  ]);
  assert.equal(states(plan!)['shop/a'], 'gone');
});

test('a never-ready pod drains per the design but was never Ready (no event-worthy drain); host-network pods own no IP', () => {
  const [plan] = run([{ at: T0, pods: [pod('starting', { ready: false }), pod('hostnet', { hostNetwork: true, ip: '192.168.1.10', ready: false })] }]);
  assert.equal(plan!.transitions.find((t) => t.key === 'shop/starting')?.wasReady, false);
  assert.deepEqual(plan!.records.get('uid-hostnet')?.ips, []);
  assert.deepEqual(kinds(plan!), ['hold:shop/starting'], 'no hold for a pod without IPs');
});
