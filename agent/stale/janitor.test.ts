import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryConntrack } from 'netlink-native/memory';
import { FakeClock } from '../../test/agent/fake-clock.js';
import { StaleJanitor } from './janitor.js';

const settle = async (clock: FakeClock, ms: number): Promise<void> => {
  await clock.advance(ms);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

test('a failed scan is retried within seconds, not at the next interval (the restart sweep runs once)', async () => {
  const ct = new MemoryConntrack();
  await ct.insertConntrackForTest([{ protocol: 'tcp', origSrc: '192.0.2.1', srcPort: 40000, origDst: '10.96.0.10', dstPort: 80, replySrc: '10.1.0.5', replySrcPort: 8080, state: 'ESTABLISHED', timeout: 3600, dnat: true }]);
  let calls = 0;
  const clock = new FakeClock();
  const janitor = new StaleJanitor({
    conntrack: ct, clock, logger: pino({ level: 'silent' }), graceMs: 0, intervalMs: 60_000,
    livePodHolders: () => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('GET /api/v1/pods: HTTP 429')) : Promise.resolve(new Set<string>());
    },
    ownership: { owns: () => false, ownedTargets: () => [], serviceOf: () => undefined },
  });
  janitor.start();
  janitor.markSynced();
  await settle(clock, 0);
  assert.equal(calls, 1, 'the first scan asked and failed');
  assert.equal(ct.entries().length, 1, 'nothing deleted on a failed scan');
  await settle(clock, 1000);
  assert.equal(calls, 2, 'retried a second later');
  await settle(clock, 100); // the grace (0) counts from the first scan that saw it stale
  assert.equal(ct.entries().length, 0, 'the entry of an address nobody holds is deleted');
  await janitor.stop();
});
