import type { DsrNodeLossRun } from '../scenarios/dsr-node-loss.js';
import type { MaglevDriftRun } from '../scenarios/maglev-drift.js';
import type { VmScenarioLine } from '../vm/run-vm-scenarios.js';
import { renderTable } from './table.js';

type Outcome<T> = T | { error: string } | { skipped: string };

export interface VmResult<T> {
  without: Outcome<T>;
  with: Outcome<T>;
}

function outcomeOf<T>(lines: readonly VmScenarioLine[], scenario: string, mode: 'without' | 'with'): Outcome<T> {
  const line = lines.find((candidate) => candidate.scenario === scenario && candidate.mode === mode);
  if (line === undefined) return { error: 'the guest reported nothing for this run' };
  if (line.skipped !== undefined) return { skipped: line.skipped };
  if (line.error !== undefined) return { error: line.error.split('\n')[0] ?? line.error };
  return line.result as T;
}

export function collectVmResult<T>(lines: readonly VmScenarioLine[], scenario: string): VmResult<T> {
  return { without: outcomeOf<T>(lines, scenario, 'without'), with: outcomeOf<T>(lines, scenario, 'with') };
}

function failed(outcome: Outcome<unknown>): string | undefined {
  if (typeof outcome !== 'object' || outcome === null) return undefined;
  if ('error' in outcome) return `error: ${String(outcome.error)}`;
  if ('skipped' in outcome) return `skipped: ${String(outcome.skipped)}`;
  return undefined;
}

function cells<T>(outcome: Outcome<T>, rows: number, render: (run: T) => string[]): string[] {
  const problem = failed(outcome);
  return problem === undefined ? render(outcome as T) : Array<string>(rows).fill(problem);
}

const MAGLEV_ROWS = ['flows compared (not to the draining pod)', 'flows the nodes disagree on', 'flows moved vs. before the drain, per node', 'new connections that reached the draining pod', 'proxy: what each node did', 'IPVS weight of the draining pod during the drain'];

export function renderMaglevTable(result: VmResult<MaglevDriftRun>): string {
  const render = (run: MaglevDriftRun): string[] => [
    String(run.compared),
    String(run.differing),
    Object.entries(run.movedPerNode).map(([node, moved]) => `${node} ${moved}`).join(', '),
    `${run.newToDrainedPod} of ${run.compared + run.toDrainedPod} x ${Object.keys(run.movedPerNode).length} nodes`,
    Object.entries(run.proxyDecisions).map(([node, decision]) => `${node} ${decision}`).join(', '),
    Object.entries(run.weightsDuringDrain).map(([node, weight]) => `${node} ${weight ?? 'absent'}`).join(', '),
  ];
  const without = cells(result.without, MAGLEV_ROWS.length, render);
  const withConndrain = cells(result.with, MAGLEV_ROWS.length, render);
  return renderTable(['maglev-drift (160 sampled flows)', 'without conndrain', 'with conndrain'], MAGLEV_ROWS.map((row, index) => [row, without[index] ?? '', withConndrain[index] ?? '']));
}

const DSR_ROWS = ['stream survived node-2\'s loss', 'bytes the pod never acknowledged', 'first failure after node-2 went down', 'requests answered after the loss (by)', 'new connections during the drain: answered, reached the draining pod', 'proxy: what each node did', 'IPVS weight of the draining pod before the loss'];

export function renderDsrTable(result: VmResult<DsrNodeLossRun>): string {
  const render = (run: DsrNodeLossRun): string[] => [
    run.survived ? 'yes' : 'no',
    String(run.bytesLost),
    run.failureSeconds === null ? 'none' : `${run.failureSeconds.toFixed(2)} s (${run.failureKind ?? '?'}: ${run.failureDetail ?? ''})`,
    `${run.answeredAfterLoss} (${run.answeredBy.join(', ') || 'nobody'})`,
    `${run.newConnections.answered} of ${run.newConnections.probed}, ${run.newConnections.toDrainingPod}`,
    Object.entries(run.proxyDecisions).map(([node, decision]) => `${node} ${decision}`).join(', '),
    Object.entries(run.weightsBeforeLoss).map(([node, weight]) => `${node} ${weight ?? 'absent'}`).join(', '),
  ];
  const without = cells(result.without, DSR_ROWS.length, render);
  const withConndrain = cells(result.with, DSR_ROWS.length, render);
  return renderTable(['dsr-node-loss', 'without conndrain', 'with conndrain'], DSR_ROWS.map((row, index) => [row, without[index] ?? '', withConndrain[index] ?? '']));
}
