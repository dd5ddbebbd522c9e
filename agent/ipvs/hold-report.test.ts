import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { IpvsDestination, IpvsService } from 'netlink-native/types';
import { pino } from 'pino';
import { newHold } from './held-server.js';
import { HoldReport } from './hold-report.js';

const SERVICE: IpvsService = {
  key: { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 },
  scheduler: 'rr', flags: 0, flagNames: [], timeout: 0, netmask: 0xffffffff,
};
const DEST: IpvsDestination = {
  address: '10.244.1.5', port: 8080, family: 4, forwarding: 'masq', weight: 1,
  upperThreshold: 0, lowerThreshold: 0, tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0,
  activeConnections: 0, inactiveConnections: 0, persistentConnections: 0,
};

function levelsLogged(elsewhere: boolean | undefined): number[] {
  const lines: number[] = [];
  const sink = new Writable({ write(chunk: Buffer, _e, done) { lines.push((JSON.parse(chunk.toString('utf8')) as { level: number }).level); done(); } });
  const logger = pino({ level: 'debug' }, sink);
  const report = new HoldReport();
  report.add(newHold({ uid: 'u1', key: 'shop/web-1', ips: [DEST.address], elsewhere }, SERVICE, DEST, undefined));
  report.log(logger);
  return lines;
}

// Every node holds another node's draining endpoint: at 200 drains a second on 5,000 nodes an
// info line per hold would be a million lines a second cluster-wide. Its own node says it at info.
test('a hold of another node\'s endpoint is logged at debug, one of this node\'s pods at info', () => {
  assert.deepEqual(levelsLogged(true), [20]);
  assert.deepEqual(levelsLogged(undefined), [30]);
  assert.deepEqual(levelsLogged(false), [30]);
});

test('the hold of another node\'s endpoint says so, and a hold of this node\'s pod does not carry the field', () => {
  assert.equal(newHold({ uid: 'u', key: 'k', ips: [], elsewhere: true }, SERVICE, DEST, undefined).elsewhere, true);
  assert.equal('elsewhere' in newHold({ uid: 'u', key: 'k', ips: [] }, SERVICE, DEST, undefined), false);
});
