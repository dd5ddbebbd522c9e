/**
 * The drain API before the first pod list (ids held, not refused), for pods that go away
 * (pod-gone, never 404), and where flows cannot be seen (the drain lasts its maximum, says why).
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { addPod, fill, get, heldOpen, makeDrainRig, openTcp, settled, type DrainRig } from '../../test/agent/drain-rig.js';

let rig: DrainRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

test('start-up: a call for an id not known yet is held until the first pod list, then drained as usual', async () => {
  rig = await makeDrainRig({ unsynced: true });
  const { api, cache, clock, gate, port, started } = rig;
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(2000);
  assert.equal(await settled(answer), false, 'not refused while the first list is not in');
  // The first list arrives: the pod is in the cache, then the gate opens.
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  gate.open();
  await clock.advance(4999);
  assert.equal(await settled(answer), false, 'the drain runs its min-drain from the moment it started');
  await clock.advance(1);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'idle');
  assert.equal(body.pod, 'shop/web');
  assert.deepEqual(started, ['shop/web']);
});

test('start-up: an id still unknown after the first pod list gets 404 then, not before', async () => {
  rig = await makeDrainRig({ unsynced: true });
  const { api, gate, port, clock } = rig;
  const { answer } = get(port, '/v1/drain/drain-nobody');
  await heldOpen(api, 1);
  await clock.advance(10_000);
  assert.equal(await settled(answer), false);
  gate.open();
  const { status, body } = await answer;
  assert.equal(status, 404);
  assert.equal(body.drainId, 'drain-nobody');
  assert.equal(api.held, 0);
  // After the sync, unknown ids are answered at once.
  assert.equal((await get(port, '/v1/drain/drain-other').answer).status, 404);
});

test('start-up: the hold is bounded by --unknown-id-wait (503 with a sentence and Retry-After)', async () => {
  rig = await makeDrainRig({ unsynced: true, unknownIdWaitMs: 30_000 });
  const { api, port, clock } = rig;
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(29_999);
  assert.equal(await settled(answer), false);
  await clock.advance(1);
  const { status, body } = await answer;
  assert.equal(status, 503);
  assert.match(String(body.error), /first pod list after 30000 ms/);
  assert.equal(api.held, 0);
});

test('start-up: a client that gives up while held starts no drain when the list arrives', async () => {
  rig = await makeDrainRig({ unsynced: true });
  const { api, cache, gate, port, started } = rig;
  const call = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  call.abort();
  await assert.rejects(call.answer);
  await heldOpen(api, 0);
  addPod(cache, 'web', '10.2.0.1');
  gate.open();
  await settled(Promise.resolve());
  assert.deepEqual(started, []);
});

test('a held drain whose pod is DELETED from the watch ends pod-gone (200 with the summary)', async () => {
  rig = await makeDrainRig();
  const { api, cache, clock, port, sessions, table } = rig;
  addPod(cache, 'web', '10.2.0.1', { minDrain: '5s' });
  await fill(table, [openTcp('10.2.0.1')]);
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(6000);
  // What the agent's watch handler does on DELETED.
  const gone = cache.remove('uid-web');
  sessions.podGone('uid-web', gone);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'pod-gone');
  assert.equal(body.elapsedMs, 6000);
});

test('a call arriving shortly after its pod\'s DELETED is answered pod-gone, not 404; forgotten after keepGoneMs', async () => {
  rig = await makeDrainRig();
  const { cache, clock, port, sessions, started } = rig;
  addPod(cache, 'web', '10.2.0.1', { drain: '40s', minDrain: '3s' });
  const gone = cache.remove('uid-web');
  sessions.podGone('uid-web', gone);
  await clock.advance(3000);
  const { status, body } = await get(port, '/v1/drain/drain-web').answer;
  assert.equal(status, 200);
  assert.deepEqual(body, { drainId: 'drain-web', pod: 'shop/web', ips: ['10.2.0.1'], ended: 'pod-gone', elapsedMs: 0, minDrainMs: 3000, drainMs: 40_000, openFlows: null, checks: 0 });
  assert.deepEqual(started, [], 'no drain started (and no DrainStarted Event) for a gone pod');
  await clock.advance(10 * 60_000);
  assert.equal((await get(port, '/v1/drain/drain-web').answer).status, 404, 'the memory of gone ids is bounded in time');
});

test('flows not visible on this node: the drain lasts its maximum even with no flow, and the summary says why', async () => {
  const reason = 'an eBPF datapath runs on this node (link cilium_host)';
  rig = await makeDrainRig({ flowVisibility: { visible: false, source: 'probe', reason, signals: ['link cilium_host'] } });
  const { api, cache, clock, port, table, finished } = rig;
  addPod(cache, 'web', '10.2.0.1', { drain: '20s', minDrain: '2s' });
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(19_999);
  assert.equal(await settled(answer), false, 'conntrack shows no flow, but that proves nothing here');
  assert.equal(table.entries().length, 0);
  await clock.advance(1);
  const { status, body } = await answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'timeout');
  assert.equal(body.elapsedMs, 20_000);
  assert.equal(body.openFlows, null);
  assert.equal(body.checks, 0);
  assert.equal(body.flowsUnknown, reason);
  assert.equal(finished[0]?.flowsUnknown, reason);
});

test('flows visible: the same drain ends at min-drain and its summary has no flowsUnknown', async () => {
  rig = await makeDrainRig({ flowVisibility: { visible: true, source: 'probe', reason: 'no eBPF datapath found', signals: [] } });
  const { api, cache, clock, port } = rig;
  addPod(cache, 'web', '10.2.0.1', { drain: '20s', minDrain: '2s' });
  const { answer } = get(port, '/v1/drain/drain-web');
  await heldOpen(api, 1);
  await clock.advance(2000);
  const { body } = await answer;
  assert.equal(body.ended, 'idle');
  assert.equal(body.elapsedMs, 2000);
  assert.equal('flowsUnknown' in body, false);
});

test('a pod the plan calls gone while still listed: a later call is pod-gone, not a new drain', async () => {
  rig = await makeDrainRig();
  const { cache, port, sessions, started } = rig;
  addPod(cache, 'late', '10.2.0.9', { drain: '40s' });
  // The plan's gone transition (deletionTimestamp + grace passed): the pod is still in the cache.
  sessions.podGone('uid-late', cache.get('uid-late'));
  const { status, body } = await get(port, '/v1/drain/drain-late').answer;
  assert.equal(status, 200);
  assert.equal(body.ended, 'pod-gone');
  assert.deepEqual(started, []);
});
