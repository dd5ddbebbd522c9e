import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTcp, summarizeUdp } from './measure/ghost-summary.js';
import { bucketRequests } from './measure/series.js';
import type { TrafficLine } from './traffic/wire.js';

const t0 = 10_000;
const event = { t0, udpTimeoutMs: 250, tcpTimeoutMs: 3000 };
const dying = new Set(['pod-b']);

function udpFlow(flow: number, pod: string, outcomes: Array<[number, boolean]>): TrafficLine[] {
  return [{ k: 'uflow', flow, port: 40000 + flow, pod }, ...outcomes.map(([t, ok], seq): TrafficLine => ({ k: 'u', flow, seq, t, ok, ...(ok ? { pod } : {}) }))];
}

test('summarizeUdp: a flow of the dying pod that recovers is measured from the deletion to its first answer', () => {
  const lines = [
    ...udpFlow(0, 'pod-a', [[9900, true], [10100, true], [10600, true]]),
    ...udpFlow(1, 'pod-b', [[9900, true], [10100, false], [10350, false], [10600, true], [10800, true]]),
  ];
  const summary = summarizeUdp(lines, dying, event);
  assert.equal(summary.affectedFlows, 1);
  assert.equal(summary.otherFlows, 1);
  assert.equal(summary.recovered, true);
  assert.equal(summary.failureSeconds, 0.6);
  assert.equal(summary.lostQueries, 2);
  assert.equal(summary.lostAfterRecovery, 0);
  assert.equal(summary.otherPodLostQueries, 0);
});

test('summarizeUdp: a lone loss after the flow recovered is counted apart, not stretched into the outage', () => {
  const lines = udpFlow(0, 'pod-b', [[10100, false], [10300, true], [10500, true], [12000, false], [12200, true]]);
  const summary = summarizeUdp(lines, dying, event);
  assert.equal(summary.failureSeconds, 0.3);
  assert.equal(summary.recovered, true);
  assert.equal(summary.lostQueries, 2);
  assert.equal(summary.lostAfterRecovery, 1);
});

test('summarizeUdp: a flow still failing at the end makes the failure last the whole window', () => {
  const lines = [...udpFlow(0, 'pod-b', [[10100, false], [12000, false]]), ...udpFlow(1, 'pod-a', [[13000, false]])];
  const summary = summarizeUdp(lines, dying, event);
  assert.equal(summary.recovered, false);
  assert.equal(summary.failureSeconds, 3);
  assert.equal(summary.windowSeconds, 3);
  assert.equal(summary.otherPodLostQueries, 1);
});

test('summarizeTcp: first failure, recovery on a new connection, bytes summed per connection', () => {
  const lines: TrafficLine[] = [
    { k: 'tconn', flow: 0, t: 9000, pod: 'pod-b', port: 1 },
    { k: 't', flow: 0, seq: 1, t: 9100, ok: true, pod: 'pod-b', bytes: 500 },
    { k: 't', flow: 0, seq: 2, t: 9200, ok: true, pod: 'pod-b', bytes: 1000 },
    { k: 'tfail', flow: 0, t: 10_200, kind: 'reset', detail: 'ECONNRESET' },
    { k: 'tconn', flow: 0, t: 10_300, pod: 'pod-a', port: 2 },
    { k: 't', flow: 0, seq: 3, t: 10_400, ok: true, pod: 'pod-a', bytes: 500 },
    { k: 'tconn', flow: 1, t: 9000, pod: 'pod-a', port: 3 },
    { k: 't', flow: 1, seq: 1, t: 9100, ok: true, pod: 'pod-a', bytes: 700 },
  ];
  const summary = summarizeTcp(lines, dying, event);
  assert.equal(summary.affectedFlows, 1);
  assert.equal(summary.firstFailureSeconds, 0.2);
  assert.equal(summary.failureKind, 'reset');
  assert.equal(summary.recoveredSeconds, 0.4);
  assert.equal(summary.bytesDelivered, 2200);
  assert.equal(summary.otherPodFailures, 0);
});

test('bucketRequests: counts answered and lost per bucket relative to the event', () => {
  const lines: TrafficLine[] = [
    { k: 'u', flow: 0, seq: 1, t: t0 - 100, ok: true },
    { k: 'u', flow: 0, seq: 2, t: t0 + 10, ok: false },
    { k: 'u', flow: 0, seq: 3, t: t0 + 260, ok: true },
    { k: 't', flow: 0, seq: 1, t: t0 + 10, ok: true },
  ];
  const series = bucketRequests(lines, 'u', t0, -0.25, 0.5, 250);
  assert.deepEqual(series.startSeconds, [-0.25, 0, 0.25]);
  assert.deepEqual(series.answered, [1, 0, 1]);
  assert.deepEqual(series.lost, [0, 1, 0]);
});
