import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { FakeClock } from '../../test/agent/fake-clock.js';
import { PodCache } from '../pods/pod-cache.js';
import { AgentMetrics } from '../runtime/metrics.js';
import { DrainPlanner } from './drain-planner.js';
import { PlanLoop } from './plan-loop.js';

/** A loop whose hold records when each run reached it. */
function rig(minRunGapMs: number): { loop: PlanLoop; clock: FakeClock; runsAt: number[] } {
  const clock = new FakeClock(0);
  const cache = new PodCache(1000);
  const runsAt: number[] = [];
  const loop = new PlanLoop({
    planner: new DrainPlanner(cache), cache, synced: () => true, resync: () => Promise.resolve(true),
    hold: { apply: () => { runsAt.push(clock.now()); return Promise.resolve(); }, idle: () => Promise.resolve() },
    holds: { draining: () => [], takeHoldingChanged: () => false },
    rewatch: () => undefined, save: () => Promise.resolve(),
    holdIntervalMs: 1000, minRunGapMs, clock, logger: pino({ level: 'silent' }), metrics: new AgentMetrics({ defaultMetrics: false }),
    stopping: () => false, yielded: () => false,
  });
  return { loop, clock, runsAt };
}

test('runs start at least the gap apart: requests meanwhile share the next run; after a quiet moment a run starts at once', async () => {
  const { loop, clock, runsAt } = rig(10);
  loop.requestRun();
  await clock.advance(0);
  assert.deepEqual(runsAt, [0], 'the first request runs at once');
  await clock.advance(2);
  loop.requestRun();
  await clock.advance(3);
  loop.requestRun(); // coalesced with the one at 2 ms
  await clock.advance(4);
  assert.deepEqual(runsAt, [0], 'not before the gap');
  await clock.advance(1);
  assert.deepEqual(runsAt, [0, 10], 'one run for the two requests, at the gap');
  await clock.advance(50);
  loop.requestRun();
  await clock.advance(0);
  assert.deepEqual(runsAt, [0, 10, 60], 'after a quiet moment: at once');
  await loop.stop();
});

test('gap 0: each request runs at once', async () => {
  const { loop, clock, runsAt } = rig(0);
  loop.requestRun();
  await clock.advance(1);
  loop.requestRun();
  await clock.advance(0);
  assert.deepEqual(runsAt, [0, 1]);
  await loop.stop();
});
