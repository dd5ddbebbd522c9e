/**
 * The real agent process (through the CLI) in a "node" network namespace, against the API
 * server STAND-IN (test/apiserver; no real API server here) with the host kernel's conntrack:
 * - start-up: the first pod lists fail, so preStop calls reach the agent before its first
 *   complete pod list; the known id is held and drained, the unknown one gets 404 only after;
 * - nasty requests (the %E0%A4%A of issue 14, garbage, oversized heads, CONNECT, absolute-form)
 *   sent raw while a drain with an open TCP flow is held: each gets a JSON answer, the process
 *   lives on, and the held drain ends at its deadline with the right summary.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { insertConntrackForTest } from 'netlink-native/testing';
import { managedPod, markDeleting } from '../apiserver/pods.js';
import { getUnix, isRoot } from './node-netns.js';
import { AgentNode } from './agent-node.js';
import { firstResponse, rawRequest } from './raw-http.js';

const skip = isRoot() ? false : 'needs root (network namespaces)';
const node = new AgentNode('cdsv');
const api = node.api;

before(async () => {
  if (skip === false) await node.start();
});

after(() => node.stop());

const drainSock = (): string => node.path('drain.sock');

test('the agent process: held (not refused) at start-up, and no request knocks it over while a drain is held', { skip, timeout: 300_000 }, async () => {
  const early = managedPod({ name: 'early', nodeName: 'node-1', ips: ['10.30.0.1'], drain: '20s', minDrain: '1s' });
  markDeleting(early, 60);
  api.putPod(early);
  const held = managedPod({ name: 'held', nodeName: 'node-1', ips: ['10.30.0.2'], drain: '6s', minDrain: '1s' });
  api.putPod(held);
  const inserted = await insertConntrackForTest(node.netlink, [{ protocol: 'tcp', origSrc: '192.0.2.1', origDst: '10.30.0.2', dstPort: 8080, state: 'ESTABLISHED', timeout: 3600 }]);
  assert.equal(inserted.failed, 0);
  // The first three lists fail: the first complete pod list is in ~1.75 s after the watch starts.
  api.failNext(3, 500, 'list');
  const agent = node.startAgent(['state.json'], ['--flow-poll-interval', '100ms', '--gone-slack', '0s', '--flow-visibility', 'conntrack']);
  await agent.waitFor('agent started', (l) => l.msg === 'agent started', 120_000);
  assert.equal(agent.lines.some((l) => /first list synced/.test(l.msg ?? '')), false, 'the calls below reach the agent before its first pod list');
  const started = Date.now();
  const [known, unknown] = await Promise.all([getUnix(drainSock(), '/v1/drain/drain-early'), getUnix(drainSock(), '/v1/drain/drain-nobody')]);
  assert.equal(known.status, 200, known.body);
  assert.equal((JSON.parse(known.body) as { ended: string }).ended, 'idle');
  assert.equal(unknown.status, 404);
  assert.ok(agent.lines.some((l) => /held until it is/.test(l.msg ?? '')), 'the agent said it held the call');
  assert.ok(Date.now() - started >= 500, 'the 404 came after the first pod list');

  // A drain with an open TCP flow, held while the nasty requests arrive.
  const heldCall = getUnix(drainSock(), '/v1/drain/drain-held');
  await agent.waitFor('held drain started', (l) => l.drainId === 'drain-held' && l.msg === 'drain started');
  const nasty: Array<[string, number]> = [
    ['GET /v1/drain/%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400],
    ['GET /v1/drain/%E0%A4%A HTTP/1.1\r\n\r\n', 400],
    ['\x00\x01\x02garbage\r\n\r\n', 400],
    [`GET /v1/drain/x HTTP/1.1\r\nHost: h\r\nX: ${'y'.repeat(30_000)}\r\n\r\n`, 431],
    ['CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: h\r\n\r\n', 405],
    ['GET http://evil/v1/drain/drain-held?x=%ZZ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n', 0],
    ['POST /v1/drain/drain-held HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 405],
  ];
  for (const [request, status] of nasty) {
    // No half-close: the test relay closes both ways when its inbound side ends.
    const reply = await rawRequest(drainSock(), Buffer.from(request, 'latin1'), { idleMs: 300, halfClose: false });
    if (status === 0) continue; // joins the held drain; the raw client then goes away
    const parsed = firstResponse(reply.bytes);
    if (typeof parsed === 'string') assert.fail(`${JSON.stringify(request.slice(0, 60))}: ${parsed}`);
    assert.equal(parsed.status, status, JSON.stringify(request.slice(0, 60)));
    assert.equal(typeof (JSON.parse(parsed.body) as { error: unknown }).error, 'string');
  }
  assert.equal(agent.child.exitCode, null, 'the agent process lives');
  assert.equal((await getUnix(node.path('probes.sock'), '/readyz')).status, 200);
  const heldAnswer = await heldCall;
  assert.equal(heldAnswer.status, 200);
  const summary = JSON.parse(heldAnswer.body) as { ended: string; openFlows: number; drainMs: number; pod: string };
  assert.deepEqual([summary.pod, summary.ended, summary.openFlows, summary.drainMs], ['shop/held', 'timeout', 1, 6000]);
  assert.equal(agent.child.exitCode, null);
  assert.equal(agent.lines.filter((l) => (l.level ?? 0) >= 50 && /drain API handler failed/.test(l.msg ?? '')).length, 0, 'no handler failed');
});
