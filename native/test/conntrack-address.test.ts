/** Address spelling shared by the stand-in and the wrapper: the same text glibc's inet_ntop (the addon) prints. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { addressKey, canonicalAddress } from '../lib/conntrack-address.js';

it('spells addresses as inet_ntop does', () => {
  // right-hand sides produced by Python's socket.inet_ntop (glibc) on this machine
  const cases: [string, string][] = [
    ['10.0.0.1', '10.0.0.1'],
    ['FD00:0:0:0:0:0:0:1', 'fd00::1'],
    ['::ffff:0102:0304', '::ffff:1.2.3.4'],
    ['::1.2.3.4', '::1.2.3.4'],
    ['::1', '::1'],
    ['::', '::'],
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['fd00:244::', 'fd00:244::'],
  ];
  for (const [input, want] of cases) assert.equal(canonicalAddress(input), want, input);
});

it('rejects what is not an address and keeps families apart', () => {
  for (const bad of ['10.0.0.256', 'pod', '', '1::2::3', 'fe80::1%eth0', '010.0.0.1']) assert.equal(canonicalAddress(bad), undefined, bad);
  assert.notEqual(addressKey('1.2.3.4'), addressKey('::ffff:1.2.3.4'));
  assert.equal(addressKey('fd00::0:5'), addressKey('FD00::5'));
});
