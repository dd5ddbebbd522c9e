/**
 * The VM scenarios inside the QEMU guest (real IPVS), one boot for both, each without and
 * with the real agents. Fails when a result regresses:
 * - maglev-drift: without conndrain the nodes' Maglev tables disagree on some flows to the
 *   other pods; with it the draining pod is present on every node (weight 0) and they agree;
 * - dsr-node-loss: without conndrain the stream dies when node-2 goes (the new node does not
 *   know the pod). With conndrain the result is recorded, not asserted to pass: weight 0 in
 *   `mh` alone does not carry a mid-flow packet (see shared/design.md); the flow-preserving
 *   drain issue turns this into an assertion.
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

const WITH_TODO = 'the agents did not reach /readyz within 180 s inside the TCG guest on the shared 2-CPU machine (2026-12-02); the with-conndrain VM runs are recorded as errors until they do';

test('maglev-drift without conndrain: nodes that deleted the draining pod disagree with the node that kept it', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<MaglevDriftRun>(await guestLines(), 'maglev-drift');
  assert.ok(isRun(result.without), JSON.stringify(result.without));
  assert.ok(result.without.compared >= 80, JSON.stringify(result.without));
  assert.equal(result.without.unanswered, 0, JSON.stringify(result.without));
  assert.deepEqual(result.without.proxyDecisions, { 'node-1': 'deleted', 'node-2': 'weight-0', 'node-3': 'deleted' }, JSON.stringify(result.without));
  assert.ok(result.without.differing > 0, `without conndrain the nodes agreed on every flow: ${JSON.stringify(result.without)}`);
  assert.equal(result.without.movedPerNode['node-2'], 0, `node-2 kept the pod at weight 0: its table must not move: ${JSON.stringify(result.without)}`);
});

test('maglev-drift with conndrain: every node holds the pod at weight 0 and the nodes agree', { skip: reason ?? false, todo: WITH_TODO, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<MaglevDriftRun>(await guestLines(), 'maglev-drift');
  assert.ok(isRun(result.with), JSON.stringify(result.with));
  assert.ok(result.with.compared >= 80, JSON.stringify(result.with));
  assert.deepEqual(Object.values(result.with.weightsDuringDrain), [0, 0, 0], JSON.stringify(result.with));
  assert.equal(result.with.differing, 0, `with conndrain the nodes disagree: ${JSON.stringify(result.with)}`);
});

test('dsr-node-loss without conndrain: the stream breaks when node-2 goes', { skip: reason ?? false, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<DsrNodeLossRun>(await guestLines(), 'dsr-node-loss');
  assert.ok(isRun(result.without), JSON.stringify(result.without));
  assert.deepEqual(result.without.proxyDecisions, { 'node-1': 'deleted', 'node-2': 'weight-0', 'node-3': 'deleted' }, JSON.stringify(result.without));
  assert.equal(result.without.survived, false, JSON.stringify(result.without));
});

test('dsr-node-loss with conndrain: every node holds the pod at weight 0; the outcome is recorded', { skip: reason ?? false, todo: WITH_TODO, timeout: 1_800_000 }, async () => {
  const result = collectVmResult<DsrNodeLossRun>(await guestLines(), 'dsr-node-loss');
  assert.ok(isRun(result.with), JSON.stringify(result.with));
  assert.deepEqual(Object.values(result.with.weightsBeforeLoss), [0, 0, 0], `every node holds the pod at weight 0: ${JSON.stringify(result.with)}`);
  assert.equal(typeof result.with.survived, 'boolean');
});
