import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../test/agent/fake-clock.js';
import { HOLDS_WAIT_MS, IpvsOwnership } from './ipvs-ownership.js';

function ownership(): { owner: IpvsOwnership; clock: FakeClock; gained: number[] } {
  const clock = new FakeClock();
  const gained: number[] = [];
  const owner = new IpvsOwnership({ clock, logger: pino({ level: 'silent' }), gained: () => gained.push(clock.now()) });
  return { owner, clock, gained };
}

test('a newer instance edits IPVS only once every older one it follows has handed over or is gone', () => {
  const { owner, gained } = ownership();
  assert.equal(owner.owns, true, 'alone: owns at once');
  owner.expect('a');
  owner.expect('b');
  assert.equal(owner.owns, false);
  owner.settled('a');
  assert.equal(owner.owns, false, 'b has not handed over yet');
  owner.settled('b');
  assert.equal(owner.owns, true);
  owner.settled('b');
  assert.equal(gained.length, 1, 'gained once');
});

test('an older instance that never answers take is waited for at most HOLDS_WAIT_MS', async () => {
  const { owner, clock, gained } = ownership();
  owner.expect('hung');
  await clock.advance(HOLDS_WAIT_MS * 2);
  assert.equal(owner.owns, false, 'not asked yet: no wait runs (its first pod list is not in)');
  owner.asked('hung');
  await clock.advance(HOLDS_WAIT_MS - 1);
  assert.equal(owner.owns, false);
  await clock.advance(1);
  assert.equal(owner.owns, true);
  assert.equal(gained.length, 1);
});

test('an instance that handed IPVS over edits nothing until the newer one goes away', () => {
  const { owner, gained } = ownership();
  owner.handOver('newer');
  assert.equal(owner.owns, false);
  owner.reclaim();
  assert.equal(owner.owns, true);
  assert.equal(gained.length, 1);
});
