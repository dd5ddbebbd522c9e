import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { FakeClock } from '../../test/agent/fake-clock.js';
import { PodCache } from '../pods/pod-cache.js';
import { AgentMetrics } from '../runtime/metrics.js';
import { DrainPlanner } from './drain-planner.js';
import { PlanLoop } from './plan-loop.js';

/** A loop whose hold records when each run reached it. */
function rig(minRunGapMs: number, holding = true): { loop: PlanLoop; clock: FakeClock; runsAt: number[]; drainingAsked: () => number } {
  const clock = new FakeClock(0);
  const cache = new PodCache(1000);
  const runsAt: number[] = [];
  let asked = 0;
  const loop = new PlanLoop({
    planner: new DrainPlanner(cache), cache, synced: () => true, resync: () => Promise.resolve(true),
    hold: { holding, apply: () => { runsAt.push(clock.now()); return Promise.resolve(); }, idle: () => Promise.resolve() },
    holds: { draining: () => ((asked += 1), []), takeHoldingChanged: () => true },
    rewatch: () => undefined, save: () => Promise.resolve(),
    holdIntervalMs: 1000, minRunGapMs, clock, logger: pino({ level: 'silent' }), metrics: new AgentMetrics({ defaultMetrics: false }),
    stopping: () => false, yielded: () => false,
  });
  return { loop, clock, runsAt, drainingAsked: () => asked };
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

test('with the hold off (no IPVS on the node) no run builds the list of pods to hold', async () => {
  const off = rig(0, false);
  const on = rig(0, true);
  for (const { loop, clock } of [off, on]) {
    await loop.start();
    loop.requestRun();
    await clock.advance(0);
    await clock.advance(1000); // the hold interval: a full pass is due
    await loop.stop();
  }
  assert.ok(off.runsAt.length >= 2 && on.runsAt.length >= 2, 'both ran, each time reaching the hold');
  assert.equal(off.drainingAsked(), 0);
  assert.ok(on.drainingAsked() >= 2, 'with the hold on, each run that changed holds or is a full pass builds it');
});
