import { ghostJson, renderGhostChart, renderGhostTable, type GhostResult } from './report/ghost-report.js';
import { writeScenarioResults } from './report/write-results.js';
import { isAgentCommandAvailable } from './scenarios/agent-available.js';
import { runGhostOnce } from './scenarios/ghost.js';
import { DEFAULT_GHOST_TIMING } from './scenarios/ghost-plan.js';

export const SCENARIOS = ['ghost', 'maglev-drift', 'dsr-node-loss'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface LabRunOptions {
  /** Write results (JSON, Markdown, PNG) here; nothing is written when undefined. */
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
  options.log('ghost: run 1/2, without conndrain');
  const without = await runGhostOnce({ withConndrain: false, log: options.log });
  let withConndrain: GhostResult['with'] = { skipped: '`conndrain agent` is not available in this checkout' };
  if (isAgentCommandAvailable()) {
    options.log('ghost: run 2/2, with conndrain');
    withConndrain = await runGhostOnce({ withConndrain: true, log: options.log });
  } else {
    options.log('ghost: run 2/2 skipped: the agent command is not registered yet');
  }
  const result: GhostResult = { without, with: withConndrain, drainSeconds: DEFAULT_GHOST_TIMING.drainMs / 1000 };
  const table = renderGhostTable(result);
  const notes = [
    `UDP conntrack timeouts on the node: ${without.udpTimeouts.unreplied} s unreplied, ${without.udpTimeouts.stream} s stream. A client that keeps sending refreshes its entry with every packet, so without cleanup the ghost lives until the client stays silent that long.`,
    'Pods are deleted the way the kubelet does it: the process stops (its TCP connections close), then the sandbox namespace goes, then the API object is deleted (the stand-in publishes DELETED).',
    'The API server is the list/watch stand-in in test/apiserver (no kube-apiserver can run here); the agent is the real `conndrain agent` process in the node namespace.',
  ];
  const written = options.resultsDir === undefined ? [] : await writeScenarioResults(options.resultsDir, { scenario: 'ghost', result, table, chart: renderGhostChart(result), command: options.command, notes });
  return { table, json: ghostJson(result), written, notes };
}

/** Runs one scenario end to end (topology up, measure, topology down). */
export async function runLabScenario(name: ScenarioName, options: LabRunOptions): Promise<LabOutcome> {
  switch (name) {
    case 'ghost':
      return runGhost(options);
    case 'maglev-drift':
    case 'dsr-node-loss':
      throw new Error(`scenario ${name} runs inside the QEMU guest and is not wired yet`);
  }
}
