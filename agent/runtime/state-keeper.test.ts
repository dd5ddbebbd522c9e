/**
 * The state keeper's last write is its last: a part that asks to save after the agent's stop
 * wrote the file (an Event recorded while the agent stops, a session that changed) writes
 * nothing, so a stopped process never writes over the file the next instance may own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../../time/clock.js';
import { StateKeeper } from './state-keeper.js';
import type { SessionRecord } from './state-file.js';

const session = (drainId: string): SessionRecord => ({ drainId, uid: `u-${drainId}`, key: `shop/${drainId}`, nodeName: 'node-1', ips: ['10.0.0.1'], startedAtMs: 5, minDrainMs: 0, drainMs: 4000, startedPosted: true, holder: 'i-1', handedOver: false });

test('after stop() the keeper writes nothing more: a save asked later leaves the last write in place', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cd-keeper-'));
  try {
    const stateFile = join(dir, 'state.json');
    const sessions: SessionRecord[] = [session('a')];
    const keeper = new StateKeeper({
      stateFile, owner: { instance: 'i-1', startedAtMs: 1 }, clock: systemClock, logger: pino({ level: 'silent' }),
      superseded: () => false,
      sources: { pods: () => [], holds: () => [], sessions: () => [...sessions] },
      resume: { pods: () => undefined, holds: () => undefined },
    });
    await keeper.start();
    keeper.allowWrites();
    await keeper.save();
    const drainIds = (): string[] => (JSON.parse(readFileSync(stateFile, 'utf8')) as { sessions: SessionRecord[] }).sessions.map((s) => s.drainId);
    assert.deepEqual(drainIds(), ['a']);
    sessions.push(session('b'));
    await keeper.stop();
    assert.deepEqual(drainIds(), ['a', 'b'], 'the last write has what was there at stop');
    sessions.splice(0);
    await keeper.save();
    await new Promise((r) => setTimeout(r, 300)); // past the writer's minimum gap
    assert.deepEqual(drainIds(), ['a', 'b'], 'a save after stop writes nothing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
