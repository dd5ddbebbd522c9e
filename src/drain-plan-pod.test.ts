/**
 * planPod (one pod at a time, what the agent runs per watch event) takes exactly the
 * decisions planDrains (every pod at once) takes, over random pods and previous records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DRAIN_STATES } from './contract.js';
import { planDrains, planPod, type PlanAction, type PodRecord, type Transition } from './drain-plan.js';
import type { PodView } from './pod/view.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const UIDS = ['u1', 'u2', 'u3', 'u4', 'u5'];
const IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3', 'fd00::1'];

const viewArb = (uid: string): fc.Arbitrary<PodView> => fc.record({
  key: fc.constantFrom(`shop/${uid}`, `pay/${uid}`),
  nodeName: fc.option(fc.constantFrom('n1', 'n2'), { nil: undefined }),
  ips: fc.uniqueArray(fc.constantFrom(...IPS), { maxLength: 2 }),
  ready: fc.boolean(),
  goneAtMs: fc.option(fc.integer({ min: T0 - 5000, max: T0 + 5000 }), { nil: undefined }),
  terminal: fc.boolean(),
  drainId: fc.constant(undefined),
}).map((v) => ({ ...v, uid, deleting: v.goneAtMs !== undefined }));

const recordArb = (uid: string): fc.Arbitrary<PodRecord> => fc.record({
  key: fc.constant(`shop/${uid}`),
  nodeName: fc.option(fc.constantFrom('n1', 'n2'), { nil: undefined }),
  ips: fc.uniqueArray(fc.constantFrom(...IPS), { maxLength: 2 }),
  state: fc.constantFrom(...DRAIN_STATES),
  sinceMs: fc.integer({ min: T0 - 10_000, max: T0 }),
  wasReady: fc.boolean(),
  reason: fc.constantFrom('ready', 'not-ready', 'deleting', 'deleted', 'grace-elapsed', 'terminal', 'flushed' as const),
}).map((r) => ({ ...r, uid }));

const caseArb = fc.record({
  pods: fc.subarray(UIDS).chain((uids) => fc.tuple(...uids.map(viewArb))),
  previous: fc.subarray(UIDS).chain((uids) => fc.tuple(...uids.map(recordArb))),
  nowMs: fc.integer({ min: T0 - 6000, max: T0 + 6000 }),
});

const byUid = (a: { uid: string }, b: { uid: string }): number => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
const actionKey = (a: PlanAction): string => (a.kind === 'skip-reused' ? `skip ${a.uid} ${a.ip}` : `${a.kind} ${a.uid} ${a.ips.join(',')}${a.kind === 'release' ? ` ${a.why}` : ''}`);

test('planPod, pod by pod, decides what planDrains decides for all pods at once', () => {
  fc.assert(
    fc.property(caseArb, ({ pods, previous, nowMs }) => {
      const prev = new Map(previous.map((r) => [r.uid, r]));
      const all = planDrains({ pods, previous: prev, nowMs });
      const live = [...all.records.values()].filter((r) => r.state === 'serving' || r.state === 'draining');
      const liveHolder = (ip: string, except: string): string | undefined => live.find((r) => r.uid !== except && r.ips.includes(ip))?.key;
      const records: PodRecord[] = [];
      const transitions: Transition[] = [];
      const actions: PlanAction[] = [];
      for (const uid of UIDS) {
        const pod = pods.find((p) => p.uid === uid);
        if (pod === undefined && !prev.has(uid)) continue;
        const one = planPod({ pod, previous: prev.get(uid), nowMs, liveHolder });
        if (one.record !== undefined) records.push(one.record);
        if (one.transition !== undefined) transitions.push(one.transition);
        actions.push(...one.actions);
        assert.equal(one.keep, one.record !== undefined && one.record.state !== 'serving');
      }
      assert.deepEqual(records.sort(byUid), [...all.records.values()].sort(byUid));
      assert.deepEqual(transitions.sort(byUid), [...all.transitions].sort(byUid));
      assert.deepEqual(actions.map(actionKey).sort(), all.actions.map(actionKey).sort());
    }),
    { numRuns: 500 },
  );
});
