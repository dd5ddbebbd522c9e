import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalAddress, formatServiceKey, ipvsFlagNames, parseDestinationKey, parseServiceKey } from 'netlink-native';
import { destinationSpecOf, formatDestinationKey, sameDestinationKey } from 'netlink-native/ipvs-keys';

test('service names round-trip: address/port services of both families and fwmark services', () => {
  const cases: Array<[string, unknown]> = [
    ['tcp:10.96.0.10:80', { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 }],
    ['udp:[fd00::a]:53', { family: 6, protocol: 'udp', address: 'fd00::a', port: 53 }],
    ['sctp:10.0.0.1:0', { family: 4, protocol: 'sctp', address: '10.0.0.1', port: 0 }],
    ['fwmark:42', { family: 4, fwmark: 42 }],
    ['fwmark6:7', { family: 6, fwmark: 7 }],
  ];
  for (const [text, key] of cases) {
    assert.deepEqual(parseServiceKey(text), key, text);
    assert.equal(formatServiceKey(parseServiceKey(text) as never), text);
  }
  assert.deepEqual(parseServiceKey('udp:[FD00:0::A]:53'), { family: 6, protocol: 'udp', address: 'fd00::a', port: 53 }, 'canonical IPv6');
});

test('one text per key: addresses lower-cased as the kernel spells them, IPv6 in brackets', () => {
  assert.equal(formatServiceKey({ family: 6, protocol: 'tcp', address: 'FD00::A', port: 80 }), 'tcp:[fd00::a]:80');
  assert.equal(formatDestinationKey({ address: 'FD00::5', port: 8080 }), '[fd00::5]:8080');
  assert.equal(formatDestinationKey({ address: '10.244.1.5', port: 8080 }), '10.244.1.5:8080');
});

test('the spec of a listed destination re-creates it, at its own weight or the one given', () => {
  const listed = {
    address: '10.244.1.5', port: 8080, family: 4, forwarding: 'tunnel', weight: 3, upperThreshold: 10, lowerThreshold: 2,
    tunnelType: 'gue', tunnelPort: 6080, tunnelFlags: 1, activeConnections: 4, inactiveConnections: 5, persistentConnections: 6,
  } as const;
  const spec = { address: '10.244.1.5', port: 8080, family: 4, forwarding: 'tunnel', upperThreshold: 10, lowerThreshold: 2, tunnelType: 'gue', tunnelPort: 6080, tunnelFlags: 1 };
  assert.deepEqual(destinationSpecOf(listed), { ...spec, weight: 3 });
  assert.deepEqual(destinationSpecOf(listed, 0), { ...spec, weight: 0 });
});

test('malformed service and destination names are refused', () => {
  for (const text of ['tcp:10.96.0.10', 'icmp:10.0.0.1:80', 'tcp:10.0.0.256:80', 'tcp:fd00::1:80', 'tcp:10.0.0.1:65536', 'fwmark:0', 'fwmark:4294967296', 'fwmark:x', '']) {
    assert.equal(parseServiceKey(text), undefined, text);
  }
  for (const text of ['10.0.0.1', '10.0.0.1:', 'fd00::1:80', '[10.0.0.1]:80x', 'host:80']) {
    assert.equal(parseDestinationKey(text), undefined, text);
  }
  assert.deepEqual(parseDestinationKey('[fd00::5]:8080'), { address: 'fd00::5', port: 8080, family: 6 });
  assert.deepEqual(parseDestinationKey('10.244.1.5:8080'), { address: '10.244.1.5', port: 8080, family: 4 });
});

test('flag names and canonical addresses', () => {
  assert.deepEqual(ipvsFlagNames(0x0b), ['persistent', 'hashed', 'sched-flag-1']);
  assert.deepEqual(ipvsFlagNames(0x100), ['0x100']);
  assert.equal(canonicalAddress('FD00:0000:0000::0001'), 'fd00::1');
  assert.equal(canonicalAddress('10.0.0.1'), '10.0.0.1');
  assert.equal(canonicalAddress('::FFFF:10.0.0.1'), '::ffff:a00:1', 'an IPv4-mapped IPv6 address is IPv6');
  assert.equal(canonicalAddress('not-an-ip'), 'not-an-ip', 'anything else as given');
  assert.ok(sameDestinationKey({ address: 'FD00::5', port: 80 }, { address: 'fd00:0::5', port: 80 }));
  assert.ok(!sameDestinationKey({ address: '10.0.0.5', port: 80 }, { address: '10.0.0.5', port: 81 }));
});
