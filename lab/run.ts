import { ghostJson, ghostChart, renderGhostTable, type GhostResult } from './report/ghost-report.js';
import { writeScenarioResults } from './report/write-results.js';
import { runGhostOnce } from './scenarios/ghost.js';
import { buildAgentBundle } from './sys/agent-bundle.js';
import { DEFAULT_GHOST_TIMING } from './scenarios/ghost-plan.js';
import { collectVmResult, renderDsrTable, renderMaglevTable } from './report/vm-report.js';
import type { DsrNodeLossRun } from './scenarios/dsr-node-loss.js';
import type { MaglevDriftRun } from './scenarios/maglev-drift.js';
import { runVmScenarios, vmUnavailableReason, type VmScenario, type VmScenarioLine } from './vm/run-vm-scenarios.js';

export const SCENARIOS = ['ghost', 'maglev-drift', 'dsr-node-loss'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface LabRunOptions {
  /** Write results (JSON, Markdown, SVG chart) here; nothing is written when undefined. */
  resultsDir?: string;
  /** The command line, recorded with the results. */
  command: string;
  log: (message: string) => void;
}

export interface LabOutcome {
  table: string;
  /** The object the `--json` line carries. */
  json: Record<string, unknown>;
  written: string[];
  notes: string[];
}

export function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIOS as readonly string[]).includes(name);
}

async function runGhost(options: LabRunOptions): Promise<LabOutcome> {
  // the agent bundle (esbuild, its own process) builds while the first run measures
  const bundling = buildAgentBundle();
  bundling.catch(() => undefined);
  options.log('ghost: run 1/2, without conndrain');
  const without = await runGhostOnce({ withConndrain: false, log: options.log });
  options.log('ghost: run 2/2, with conndrain');
  const withConndrain: GhostResult['with'] = await runGhostOnce({ withConndrain: true, log: options.log });
  const result: GhostResult = { without, with: withConndrain, drainSeconds: DEFAULT_GHOST_TIMING.drainMs / 1000 };
  const table = renderGhostTable(result);
  const notes = [
    `UDP conntrack timeouts on the node: ${without.udpTimeouts.unreplied} s unreplied, ${without.udpTimeouts.stream} s stream. A client that keeps sending refreshes its entry with every packet, so without cleanup the ghost lives until the client stays silent that long.`,
    'Pods are deleted the way the kubelet does it: the process stops (its TCP connections close), then the sandbox namespace goes, then the API object is deleted (the stand-in publishes DELETED).',
    'The API server is the list/watch stand-in in test/apiserver (no kube-apiserver can run here); the agent is the real `conndrain agent` process in the node namespace.',
  ];
  const written = options.resultsDir === undefined ? [] : await writeScenarioResults(options.resultsDir, { scenario: 'ghost', result, table, chart: ghostChart(result), command: options.command, notes });
  return { table, json: ghostJson(result), written, notes };
}

async function runVm(name: VmScenario, options: LabRunOptions): Promise<LabOutcome> {
  const reason = vmUnavailableReason();
  if (reason !== undefined) throw new Error(`${name} runs inside the QEMU guest, which cannot boot here: ${reason}`);
  options.log(`${name}: booting the QEMU guest (real IPVS); under TCG this takes several minutes`);
  return reportVm(name, await runVmScenarios([name], options.log), options);
}

/** Both VM scenarios in one guest boot (what CI and the VM test do); one outcome each. */
export async function runAllVmScenarios(options: LabRunOptions): Promise<LabOutcome[]> {
  const lines = await runVmScenarios(['maglev-drift', 'dsr-node-loss'], options.log);
  return [await reportVm('maglev-drift', lines, options), await reportVm('dsr-node-loss', lines, options)];
}

async function reportVm(name: VmScenario, lines: readonly VmScenarioLine[], options: LabRunOptions): Promise<LabOutcome> {
  const notes = [
    'Inside the QEMU guest (Debian kernel, real IPVS): nodes 1-3 run the kube-router stand-in (mh, mh-fallback,mh-port, IPIP tunnel, sloppy_tcp=1); node-4 is the never-drained reference.',
    'With conndrain, each node runs the real `conndrain agent` against the API stand-in.',
  ];
  let table: string;
  let json: Record<string, unknown>;
  let result: unknown;
  if (name === 'maglev-drift') {
    const collected = collectVmResult<MaglevDriftRun>(lines, name);
    table = renderMaglevTable(collected);
    json = { without: pick(collected.without, ['differing', 'compared', 'toDrainedPod', 'unanswered']), with: pick(collected.with, ['differing', 'compared', 'toDrainedPod', 'unanswered']) };
    result = collected;
  } else {
    const collected = collectVmResult<DsrNodeLossRun>(lines, name);
    table = renderDsrTable(collected);
    const keys = ['survived', 'bytesLost', 'bytesWritten', 'failureSeconds', 'failureKind'];
    json = { without: pick(collected.without, keys), with: pick(collected.with, keys) };
    result = collected;
    notes.push('In the kernel\'s mh scheduler a weight-0 server is unavailable (ip_vs_mh.c, is_unavailable): holding the pod at weight 0 alone cannot carry a mid-flow packet to it; with conndrain, flow pinning (agent/ipvs/flowpin) sends the packets without SYN to a twin service with the pre-drain table, and new connections (SYN) keep avoiding the draining pod.');
    notes.push('With conndrain the loss comes once every node has pinned the flows (the run waits and records pinnedAfterSeconds); the kube-router stand-in\'s sync deleted every service it did not program (staleDeletedByProxy) and the agents re-created the twins. The stream\'s client waits up to 10 s for an answer: after the reroute, TCP\'s retransmission backoff can delay one answer by a few seconds in a stream that survives.');
  }
  const written = options.resultsDir === undefined ? [] : await writeScenarioResults(options.resultsDir, { scenario: name, result, table, command: options.command, notes });
  return { table, json, written, notes };
}

function pick(outcome: unknown, keys: readonly string[]): unknown {
  if (typeof outcome !== 'object' || outcome === null || 'error' in outcome || 'skipped' in outcome) return outcome;
  return Object.fromEntries(keys.map((key) => [key, (outcome as Record<string, unknown>)[key]]));
}

/** Runs one scenario end to end (topology up, measure, topology down). */
export async function runLabScenario(name: ScenarioName, options: LabRunOptions): Promise<LabOutcome> {
  switch (name) {
    case 'ghost':
      return runGhost(options);
    case 'maglev-drift':
    case 'dsr-node-loss':
      return runVm(name, options);
  }
}
