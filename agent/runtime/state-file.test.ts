/** The state file's versions: a version 1 file (no sessions) is still read; version 2 keeps sessions and the owner. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseState, StateWriter, STATE_VERSION, writeStateAtomic, type AgentState, type SessionRecord } from './state-file.js';

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

test('state file: an ended session kept for its DrainInterrupted is written apart (endedUnposted), so an older agent reading sessions never resumes it; both layouts read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cd-state-ended-'));
  try {
    const path = join(dir, 'state.json');
    const ended: SessionRecord = { ...session, drainId: 'd2', uid: 'u2', interruptedUnposted: true, ended: true };
    const state: AgentState = { version: STATE_VERSION, writtenAt: 'z', pods: [], holds: [], sessions: [session, ended] };
    await writeStateAtomic(path, state);
    const raw = JSON.parse(readFileSync(path, 'utf8')) as { sessions: SessionRecord[]; endedUnposted: SessionRecord[] };
    assert.deepEqual(raw.sessions, [session], 'what an agent older than endedUnposted reads: the running drain only');
    assert.deepEqual(raw.endedUnposted.map((s) => [s.drainId, s.interruptedUnposted, s.ended]), [['d2', true, undefined]]);
    assert.deepEqual(parseState(readFileSync(path, 'utf8')).sessions, [session, ended]);
    // The previous layout (the ended record among the sessions, flagged) still reads.
    assert.deepEqual(parseState(JSON.stringify({ ...state, sessions: [session, ended] })).sessions, [session, ended]);
    assert.throws(() => parseState(JSON.stringify({ ...state, sessions: [], endedUnposted: [{ drainId: 'd3' }] })), /endedUnposted/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('state writer: a first change is written at once; a burst after it is one write, at least the gap later, with the last state', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cd-state-writer-'));
  try {
    const path = join(dir, 'state.json');
    const starts: number[] = [];
    let generation = 0;
    const writer = new StateWriter(path, (): AgentState => {
      starts.push(performance.now());
      return { version: STATE_VERSION, writtenAt: String(generation), pods: [], holds: [], sessions: [] };
    }, (e) => assert.fail(String(e)), 150);
    const t0 = performance.now();
    await writer.save();
    assert.ok(starts[0] !== undefined && (starts[0] - t0) < 100, 'the first write does not wait for the gap');
    const burst: Array<Promise<void>> = [];
    for (generation = 1; generation <= 20; generation++) burst.push(writer.save());
    generation = 20;
    await Promise.all(burst);
    assert.equal(starts.length, 2, 'twenty changes in a burst: one more write');
    assert.ok((starts[1] ?? 0) - (starts[0] ?? 0) >= 149, `writes ${((starts[1] ?? 0) - (starts[0] ?? 0)).toFixed(0)} ms apart`);
    assert.equal(parseState(readFileSync(path, 'utf8')).writtenAt, '20', 'the write holds the state as of when it ran');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
