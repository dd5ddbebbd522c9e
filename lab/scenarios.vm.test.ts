/**
 * The VM scenarios inside the QEMU guest (real IPVS + nftables), one boot for both, each
 * without and with the real agents (bundled CLI, sys/agent-bundle.ts). Fails when a result
 * regresses:
 * - maglev-drift: without conndrain the nodes' Maglev tables disagree on some flows to the
 *   other pods; with it the draining pod is present on every node (weight 0) and they agree on
 *   every flow; in both, no new connection reaches the draining pod;
 * - dsr-node-loss: without conndrain the stream dies when node-2 goes (the new node does not
 *   know the pod); with conndrain (IPVS hold + flow pinning) it survives with no reset and no
 *   lost byte, and new connections during the drain, before and after the loss, never reach
 *   the draining pod.
 * CONNDRAIN_LAB_VM_WITH=0 skips the with-conndrain runs (their tests then fail: they are the point).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectVmResult } from './report/vm-report.js';
import type { DsrNodeLossRun } from './scenarios/dsr-node-loss.js';
import type { MaglevDriftRun } from './scenarios/maglev-drift.js';
import { runVmScenarios, vmUnavailableReason, type VmScenarioLine } from './vm/run-vm-scenarios.js';

const reason = vmUnavailableReason();
let lines: VmScenarioLine[] | undefined;

async function guestLines(): Promise<VmScenarioLine[]> {
  lines ??= await runVmScenarios(['maglev-drift', 'dsr-node-loss'], (message) => process.stderr.write(`${message}\n`));
  return lines;
}

function isRun<T>(outcome: T | { error: string } | { skipped: string }): outcome is T {
  return typeof outcome === 'object' && outcome !== null && !('error' in outcome) && !('skipped' in outcome);
}

test('maglev-drift without conndrain: nodes that deleted the draining pod disagree with the node that kept it', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<MaglevDriftRun>(await guestLines(), 'maglev-drift');
  assert.ok(isRun(result.without), JSON.stringify(result.without));
  assert.ok(result.without.compared >= 80, JSON.stringify(result.without));
  assert.equal(result.without.unanswered, 0, JSON.stringify(result.without));
  assert.deepEqual(result.without.proxyDecisions, { 'node-1': 'deleted', 'node-2': 'weight-0', 'node-3': 'deleted' }, JSON.stringify(result.without));
  assert.ok(result.without.differing > 0, `without conndrain the nodes agreed on every flow: ${JSON.stringify(result.without)}`);
  assert.equal(result.without.movedPerNode['node-2'], 0, `node-2 kept the pod at weight 0: its table must not move: ${JSON.stringify(result.without)}`);
  assert.equal(result.without.newToDrainedPod, 0, `a new connection reached the draining pod: ${JSON.stringify(result.without)}`);
});

test('maglev-drift with conndrain: every node holds the pod at weight 0, the nodes agree on every flow, no new connection reaches the pod', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<MaglevDriftRun>(await guestLines(), 'maglev-drift');
  assert.ok(isRun(result.with), JSON.stringify(result.with));
  assert.ok(result.with.compared >= 80, JSON.stringify(result.with));
  assert.equal(result.with.unanswered, 0, JSON.stringify(result.with));
  assert.deepEqual(Object.values(result.with.weightsDuringDrain), [0, 0, 0], JSON.stringify(result.with));
  assert.equal(result.with.differing, 0, `with conndrain the nodes disagree: ${JSON.stringify(result.with)}`);
  assert.deepEqual(Object.values(result.with.movedPerNode), [0, 0, 0], `with conndrain a node moved flows of other pods: ${JSON.stringify(result.with)}`);
  assert.equal(result.with.newToDrainedPod, 0, `a new connection reached the draining pod: ${JSON.stringify(result.with)}`);
});

test('dsr-node-loss without conndrain: the stream breaks when node-2 goes', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<DsrNodeLossRun>(await guestLines(), 'dsr-node-loss');
  assert.ok(isRun(result.without), JSON.stringify(result.without));
  assert.deepEqual(result.without.proxyDecisions, { 'node-1': 'deleted', 'node-2': 'weight-0', 'node-3': 'deleted' }, JSON.stringify(result.without));
  assert.equal(result.without.survived, false, JSON.stringify(result.without));
  assert.ok(result.without.failureKind !== null || result.without.bytesLost > 0, JSON.stringify(result.without));
});

test('dsr-node-loss with conndrain: the stream survives node-2\'s loss (no reset, no lost byte); new connections never reach the draining pod', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<DsrNodeLossRun>(await guestLines(), 'dsr-node-loss');
  assert.ok(isRun(result.with), JSON.stringify(result.with));
  const run = JSON.stringify(result.with);
  assert.deepEqual(Object.values(result.with.weightsBeforeLoss), [0, 0, 0], `every node holds the pod at weight 0: ${run}`);
  assert.equal(result.with.failureKind, null, `the stream failed: ${run}`);
  assert.equal(result.with.bytesLost, 0, `bytes lost: ${run}`);
  assert.ok(result.with.answeredAfterLoss > 0, run);
  assert.deepEqual(result.with.answeredBy, [result.with.pod], `answered by its own pod only: ${run}`);
  assert.equal(result.with.survived, true, run);
  assert.ok(result.with.newConnections.answered >= 8, `new connections during the drain were answered: ${run}`);
  assert.equal(result.with.newConnections.toDrainingPod, 0, `a new connection reached the draining pod: ${run}`);
});
