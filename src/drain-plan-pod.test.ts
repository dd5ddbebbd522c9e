/**
 * Properties of planPod (the drain decision of one pod, what the agent runs per watch event)
 * over random views, previous records and holders of IPs: relations between its input and
 * its output, not a second implementation of it (the states by example: drain-plan.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DRAIN_STATES } from './contract.js';
import { planPod, type PodRecord } from './drain-plan.js';
import type { PodView } from './pod/view.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
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
  pod: fc.option(viewArb('u1'), { nil: undefined }),
  previous: fc.option(recordArb('u1'), { nil: undefined }),
  nowMs: fc.integer({ min: T0 - 6000, max: T0 + 6000 }),
  /** The IPs a live pod other than u1 holds, and its key. */
  held: fc.subarray(IPS),
});

const planOf = ({ pod, previous, nowMs, held }: { pod: PodView | undefined; previous: PodRecord | undefined; nowMs: number; held: string[] }) =>
  planPod({ pod, previous, nowMs, liveHolder: (ip, exceptUid) => (exceptUid !== 'u9' && held.includes(ip) ? 'shop/u9' : undefined) });

test('planPod: the record, its keeping and its transition agree with each other', () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      const { record, keep, transition } = planOf(c);
      assert.equal(keep, record !== undefined && record.state !== 'serving');
      const from = c.previous?.state ?? 'new';
      if (record === undefined) {
        assert.equal(c.pod, undefined, 'a listed pod always has a record');
        assert.ok(c.previous === undefined || c.previous.state === 'flushed', 'only an unknown or flushed absent pod is forgotten');
        assert.equal(transition, undefined);
        return;
      }
      if (from === record.state) assert.equal(transition, undefined);
      else assert.deepEqual(transition, { uid: record.uid, key: record.key, from, to: record.state, reason: record.reason, wasReady: record.wasReady, nodeName: record.nodeName });
      assert.equal(record.sinceMs, from === record.state ? c.previous?.sinceMs : c.nowMs, 'sinceMs is when the state began');
    }),
    { numRuns: 1000 },
  );
});

test('planPod: gone and flushed are final; an absent pod is gone (deleted); what a record knows is kept', () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      const { record } = planOf(c);
      const before = c.previous?.state;
      if (before === 'gone' || before === 'flushed') assert.ok(record === undefined || record.state === before, `${before} stays ${before}`);
      if (c.pod === undefined && before !== undefined && before !== 'flushed') {
        assert.equal(record?.state, 'gone');
        if (before !== 'gone') assert.equal(record?.reason, 'deleted');
      }
      if (record === undefined || c.previous === undefined) return;
      if (c.previous.wasReady) assert.equal(record.wasReady, true, 'once Ready, always was Ready');
      if (c.pod === undefined || c.pod.ips.length === 0) assert.deepEqual(record.ips, c.previous.ips, 'IPs the API dropped are remembered');
    }),
    { numRuns: 1000 },
  );
});

test('planPod: hold while draining, release on leaving draining, flush once gone with every IP either flushed or skipped for its live holder', () => {
  fc.assert(
    fc.property(caseArb, (c) => {
      const { record, actions } = planOf(c);
      const state = record?.state;
      const hold = actions.filter((a) => a.kind === 'hold');
      const release = actions.filter((a) => a.kind === 'release');
      const flush = actions.filter((a) => a.kind === 'flush');
      const skips = actions.filter((a) => a.kind === 'skip-reused');
      assert.equal(hold.length, state === 'draining' && record !== undefined && record.ips.length > 0 ? 1 : 0);
      assert.equal(release.length, c.previous?.state === 'draining' && (state === 'serving' || state === 'gone') ? 1 : 0);
      for (const r of release) assert.equal(r.why, state);
      assert.equal(flush.length, state === 'gone' ? 1 : 0);
      if (record === undefined || state !== 'gone') {
        assert.equal(skips.length, 0);
        return;
      }
      const flushed = flush[0]?.ips ?? [];
      assert.deepEqual([...flushed, ...skips.map((s) => s.ip)].sort(), [...record.ips].sort(), 'each IP flushed or skipped, once');
      for (const ip of flushed) assert.ok(!c.held.includes(ip), `${ip}: a live pod holds it, never flushed`);
      for (const s of skips) assert.equal(s.holder, 'shop/u9');
      for (const a of actions) assert.deepEqual([a.uid, a.key], [record.uid, record.key]);
    }),
    { numRuns: 1000 },
  );
});
