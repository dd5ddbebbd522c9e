import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IpvsDestination, IpvsService } from 'netlink-native/types';
import { heldId, newHold } from './held-server.js';
import { HoldRegistry } from './hold-registry.js';

const service = (port: number): IpvsService => ({ key: { family: 4, protocol: 'tcp', address: '10.96.0.10', port }, scheduler: 'rr', flags: 0, flagNames: [], timeout: 0, netmask: 0xffffffff });
const dest = (address: string): IpvsDestination => ({
  address, port: 8080, family: 4, forwarding: 'masq', weight: 1, upperThreshold: 0, lowerThreshold: 0,
  tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0,
});
const hold = (uid: string, port: number, address: string) => newHold({ uid, key: `shop/${uid}`, ips: [address] }, service(port), dest(address), undefined);

// The per-pod index answers what a walk over every hold answered (a release costs its pod only).
test('the holds of a pod: added, replaced by another pod\'s, deleted, resumed and adopted', () => {
  const r = new HoldRegistry();
  const a80 = hold('a', 80, '10.1.0.1');
  const a81 = hold('a', 81, '10.1.0.1');
  const b80 = hold('b', 80, '10.1.0.2');
  for (const h of [a80, a81, b80]) r.set(heldId(h.service, h.destination), h);
  assert.deepEqual(r.podUidList().sort(), ['a', 'b']);
  assert.deepEqual(r.entriesOf('a').map(([, h]) => h.service.port).sort(), [80, 81]);
  // The same server now held for another pod (an IP reused): it moves to that pod.
  r.set(heldId(a81.service, a81.destination), { ...a81, podUid: 'c' });
  assert.deepEqual(r.entriesOf('a').map(([, h]) => h.service.port), [80]);
  assert.equal(r.holdsPod('c'), true);
  r.delete(heldId(a80.service, a80.destination));
  assert.equal(r.holdsPod('a'), false);
  assert.deepEqual(r.entriesOf('a'), []);
  r.delete('no such id');
  assert.equal(r.size, 2);
  const resumed = new HoldRegistry();
  resumed.resume([a80]);
  resumed.adopt([b80, a80]);
  assert.deepEqual(resumed.podUidList().sort(), ['a', 'b']);
  assert.equal(resumed.entriesOf('b').length, 1);
});
