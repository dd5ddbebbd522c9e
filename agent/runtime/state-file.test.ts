/** The state file's versions: a version 1 file (no sessions) is still read; version 2 keeps sessions and the owner. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseState, STATE_VERSION, type SessionRecord } from './state-file.js';

const session: SessionRecord = { drainId: 'd1', uid: 'u1', key: 'shop/a', nodeName: 'node-1', ips: ['10.0.0.1'], startedAtMs: 5, minDrainMs: 1000, drainMs: 30_000, startedPosted: true, holder: 'i-1', handedOver: false };

test('state file: version 1 is read with no sessions; version 2 round-trips sessions and owner; a bad session is refused', () => {
  const v1 = parseState(JSON.stringify({ version: 1, writtenAt: 'x', pods: [], holds: [] }));
  assert.deepEqual(v1, { version: STATE_VERSION, writtenAt: 'x', pods: [], holds: [], sessions: [] });
  const v2 = parseState(JSON.stringify({ version: 2, writtenAt: 'y', owner: { instance: 'i-1', startedAtMs: 3 }, pods: [], holds: [], sessions: [session] }));
  assert.deepEqual(v2.sessions, [session]);
  assert.deepEqual(v2.owner, { instance: 'i-1', startedAtMs: 3 });
  assert.throws(() => parseState(JSON.stringify({ version: 2, writtenAt: 'y', pods: [], holds: [], sessions: [{ ...session, startedAtMs: 'soon' }] })), /sessions/);
  assert.throws(() => parseState(JSON.stringify({ version: 3, pods: [], holds: [] })), /version/);
});
