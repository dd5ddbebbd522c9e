import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConntrackEntry } from 'netlink-native/types';
import { DEFAULT_FLOW_TIMEOUTS, idleMs, isOpenFlow } from './flows.js';

function e(protocol: ConntrackEntry['protocol'], timeout: number, extra: { state?: string; flags?: string[] } = {}): ConntrackEntry {
  return {
    family: 4, protocol, protocolNumber: 0,
    original: { src: '192.0.2.1', dst: '10.0.0.1' }, reply: { src: '10.0.0.1', dst: '192.0.2.1' },
    ...(extra.state === undefined ? {} : { state: extra.state }),
    timeout, mark: 0, zone: 0, status: 0, statusFlags: extra.flags ?? [], id: 1,
  };
}

test('which entries are open flows (flowIdle 10 s, kernel default timeouts)', () => {
  const cases: Array<[string, ConntrackEntry, boolean]> = [
    ['tcp established', e('tcp', 431_000, { state: 'ESTABLISHED' }), true],
    ['tcp syn_sent (connecting)', e('tcp', 100, { state: 'SYN_SENT' }), true],
    ['tcp time_wait', e('tcp', 100, { state: 'TIME_WAIT' }), false],
    ['tcp fin_wait', e('tcp', 100, { state: 'FIN_WAIT' }), false],
    ['tcp close_wait', e('tcp', 100, { state: 'CLOSE_WAIT' }), false],
    ['tcp last_ack', e('tcp', 100, { state: 'LAST_ACK' }), false],
    ['tcp close', e('tcp', 5, { state: 'CLOSE' }), false],
    ['udp assured, last packet 2 s ago', e('udp', 118, { flags: ['ASSURED'] }), true],
    ['udp assured, last packet 20 s ago', e('udp', 100, { flags: ['ASSURED'] }), false],
    ['udp unreplied, 5 s ago', e('udp', 25), true],
    ['udp unreplied, 25 s ago', e('udp', 5), false],
    ['sctp established, recent', e('sctp', 209, { state: 'ESTABLISHED' }), true],
    ['sctp shutting down', e('sctp', 209, { state: 'SHUTDOWN_SENT' }), false],
    ['ipip seen 1 s ago', e('ipip', 599), true],
    ['ipip seen 60 s ago', e('ipip', 540), false],
  ];
  for (const [name, entry, open] of cases) assert.equal(isOpenFlow(entry, 10_000, DEFAULT_FLOW_TIMEOUTS), open, name);
});

test('an entry with more time left than the full timeout counts as just seen', () => {
  assert.equal(idleMs(e('udp', 500, { flags: ['ASSURED'] }), DEFAULT_FLOW_TIMEOUTS), 0);
});
