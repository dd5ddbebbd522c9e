import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryConntrack } from 'netlink-native/memory';
import type { DeleteConntrackOptions } from 'netlink-native/types';
import { FakeClock } from '../../test/agent/fake-clock.js';
import { GhostCleanup, type FlushReport } from './ghost-cleanup.js';

async function table(): Promise<MemoryConntrack> {
  const ct = new MemoryConntrack();
  // Service traffic DNATed to pod IPs (reply source), direct traffic (original destination), IPIP.
  await ct.insertConntrackForTest([
    { protocol: 'udp', origSrc: '192.0.2.1', origDst: '10.96.0.10', replySrc: '10.2.0.1', dstPort: 53, count: 3, timeout: 100 },
    { protocol: 'tcp', origSrc: '192.0.2.1', origDst: '10.2.0.2', dstPort: 8080, count: 2, state: 'ESTABLISHED', timeout: 1000 },
    { protocol: 'ipip', origSrc: '192.0.2.9', origDst: '10.2.0.2', timeout: 600 },
    { protocol: 'tcp', origSrc: '192.0.2.1', origDst: '10.2.0.3', dstPort: 8080, count: 4, state: 'ESTABLISHED', timeout: 1000 },
    { protocol: 'udp', origSrc: '192.0.2.1', origDst: '10.96.0.10', replySrc: '10.2.0.4', dstPort: 53, srcPort: 30000, count: 2, timeout: 100 },
  ]);
  return ct;
}

function ips(ct: MemoryConntrack): string[] {
  return [...new Set(ct.entries().flatMap((e) => [e.original.dst, e.reply.src]).filter((ip) => ip.startsWith('10.2.')))].sort();
}

test('pods that go within the window: one pass; reused IP skipped and counted once; others untouched', async () => {
  const ct = await table();
  const calls: DeleteConntrackOptions[] = [];
  const real = ct.deleteConntrack.bind(ct);
  ct.deleteConntrack = (o) => {
    calls.push(o);
    return real(o);
  };
  const clock = new FakeClock();
  const flushed: string[] = [];
  const skips: string[] = [];
  const reports: FlushReport[] = [];
  const cleanup = new GhostCleanup({
    conntrack: ct, clock, windowMs: 200, logger: pino({ level: 'silent' }),
    liveHolder: (ip) => (ip === '10.2.0.4' ? 'shop/new' : undefined),
    hooks: { flushed: (uid) => flushed.push(uid), reuseSkipped: (_p, ip, holder) => skips.push(`${ip}:${holder}`), passDone: (r) => reports.push(r) },
  });
  cleanup.request({ uid: 'u1', key: 'shop/a', ips: ['10.2.0.1'] });
  await clock.advance(100);
  cleanup.request({ uid: 'u2', key: 'shop/b', ips: ['10.2.0.2'] });
  cleanup.request({ uid: 'u4', key: 'shop/old', ips: ['10.2.0.4'] });
  cleanup.request({ uid: 'u1', key: 'shop/a', ips: ['10.2.0.1'] }); // repeat: ignored
  assert.equal(calls.length, 0, 'waits for the window');
  await clock.advance(100);
  assert.equal(calls.length, 1, 'one pass for three pods');
  assert.deepEqual(calls[0]?.addresses.sort(), ['10.2.0.1', '10.2.0.2']);
  assert.deepEqual(calls[0]?.match, ['replySrc', 'origDst']);
  assert.deepEqual(calls[0]?.protocols, ['tcp', 'udp', 'sctp', 'ipip', 'ipv6']);
  assert.deepEqual(ips(ct), ['10.2.0.3', '10.2.0.4'], 'the other pod and the reused IP keep their entries');
  assert.equal(reports[0]?.result.deleted, 6);
  assert.deepEqual(flushed.sort(), ['u1', 'u2', 'u4']);
  assert.deepEqual(skips, ['10.2.0.4:shop/new']);
  assert.equal(cleanup.warnedReuses, 0, 'a flushed pod\'s reuse warning is not remembered forever (churn would grow the set)');
});

test('a failing pass is retried with backoff and nothing is lost', async () => {
  const ct = await table();
  let failures = 2;
  const real = ct.deleteConntrack.bind(ct);
  ct.deleteConntrack = (o) => (failures-- > 0 ? Promise.reject(new Error('ENOBUFS')) : real(o));
  const clock = new FakeClock();
  const flushed: string[] = [];
  let failed = 0;
  const cleanup = new GhostCleanup({
    conntrack: ct, clock, windowMs: 0, logger: pino({ level: 'silent' }), liveHolder: () => undefined,
    hooks: { flushed: (uid) => flushed.push(uid), passFailed: () => failed++ },
  });
  cleanup.request({ uid: 'u3', key: 'shop/c', ips: ['10.2.0.3'] });
  await clock.advance(0);
  assert.equal(failed, 1);
  await clock.advance(499);
  assert.equal(failed, 1, 'backoff 500 ms');
  await clock.advance(1);
  assert.equal(failed, 2);
  await clock.advance(1000);
  assert.deepEqual(flushed, ['u3']);
  assert.equal(cleanup.waiting, 0);
  assert.ok(!ips(ct).includes('10.2.0.3'));
});
