import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryConntrack } from 'netlink-native/memory';
import { systemClock } from '../../time/clock.js';
import { TargetFlush, type TargetFlushRequest } from './target-flush.js';

const NODE_IP = '192.168.1.7';

async function table(): Promise<MemoryConntrack> {
  const ct = new MemoryConntrack();
  await ct.insertConntrackForTest([
    // Service traffic DNATed to the gone endpoint's port 8080 (tcp) and 53 (udp).
    { protocol: 'tcp', origSrc: '192.0.2.1', origDst: '10.96.0.10', replySrc: NODE_IP, dstPort: 80, replySrcPort: 8080, count: 2, state: 'ESTABLISHED', timeout: 1000, dnat: true },
    { protocol: 'udp', origSrc: '192.0.2.1', origDst: '10.96.0.53', replySrc: NODE_IP, dstPort: 53, replySrcPort: 53, count: 3, timeout: 100, dnat: true },
    // Direct traffic to the endpoint's port.
    { protocol: 'tcp', origSrc: '192.0.2.2', origDst: NODE_IP, replySrc: NODE_IP, dstPort: 8080, replySrcPort: 8080, count: 1, state: 'ESTABLISHED', timeout: 1000 },
    // The same address on another port (a host-network endpoint's address is a node's: kubelet, ssh...).
    { protocol: 'tcp', origSrc: '192.0.2.3', origDst: NODE_IP, replySrc: NODE_IP, dstPort: 10250, replySrcPort: 10250, count: 4, state: 'ESTABLISHED', timeout: 1000 },
  ]);
  return ct;
}

function flushOnce(ct: MemoryConntrack, request: TargetFlushRequest, holderOf: (a: string, uid: string) => string | undefined = () => undefined): Promise<{ deleted: number; skipped: string[] }> {
  return new Promise((resolve) => {
    const skipped: string[] = [];
    const flush = new TargetFlush({
      conntrack: ct, clock: systemClock, windowMs: 0, logger: pino({ level: 'silent' }), holderOf,
      hooks: { flushed: (_r, deleted) => resolve({ deleted, skipped }), reuseSkipped: (_r, address) => skipped.push(address) },
    });
    flush.request(request);
  });
}

const gone = (scope: 'all' | 'udp-sctp'): TargetFlushRequest => ({ uid: 'u1', key: 'kube-system/hostnet', scope, targets: [{ address: NODE_IP, port: 8080, protocol: 'tcp' }, { address: NODE_IP, port: 53, protocol: 'udp' }] });

test('by target, never by bare address: the other ports of a host-network endpoint\'s address are untouched', async () => {
  const ct = await table();
  const { deleted } = await flushOnce(ct, gone('all'));
  assert.equal(deleted, 6);
  const left = ct.entries();
  assert.equal(left.length, 4);
  assert.ok(left.every((e) => e.original.dstPort === 10250));
});

test('an endpoint that left while serving: UDP and SCTP only', async () => {
  const ct = await table();
  const { deleted } = await flushOnce(ct, gone('udp-sctp'));
  assert.equal(deleted, 3);
  assert.equal(ct.entries().filter((e) => e.protocol === 'udp').length, 0);
  assert.equal(ct.entries().filter((e) => e.protocol === 'tcp').length, 7);
});

test('an address another pod holds now (IP reuse) is never flushed', async () => {
  const ct = await table();
  const { deleted, skipped } = await flushOnce(ct, gone('all'), (address, uid) => (address === NODE_IP && uid === 'u1' ? 'shop/new' : undefined));
  assert.equal(deleted, 0);
  assert.deepEqual(skipped, [NODE_IP]);
  assert.equal(ct.entries().length, 10);
});

test('a target with port 0 (resumed from the state file, ports unknown) takes only entries DNATed to the address, never direct traffic to it', async () => {
  const ct = await table();
  const anyPort: TargetFlushRequest = { uid: 'u1', key: 'shop/resumed', scope: 'all', targets: ['tcp', 'udp', 'sctp'].map((protocol) => ({ address: NODE_IP, port: 0, protocol })) };
  const { deleted } = await flushOnce(ct, anyPort);
  assert.equal(deleted, 5, 'the service traffic (2 tcp, 3 udp)');
  assert.ok(ct.entries().every((e) => e.original.dst === NODE_IP), 'direct traffic to the address left as it was');
  assert.equal(ct.entries().length, 5);
});
