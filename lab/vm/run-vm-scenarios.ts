import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInGuest } from '../../test/vm/run-in-guest.js';
import { checkGuestAvailability } from '../../test/vm/kernel.js';
import { bundleLabScripts } from '../sys/bundle-scripts.js';
import { buildAgentBundle } from '../sys/agent-bundle.js';

export type VmScenario = 'maglev-drift' | 'dsr-node-loss';

export interface VmScenarioLine {
  scenario: VmScenario;
  mode: 'without' | 'with';
  result?: unknown;
  error?: string;
  skipped?: string;
}

/** Why VM scenarios cannot run here (no QEMU, no kernel image), or undefined. */
export function vmUnavailableReason(): string | undefined {
  const availability = checkGuestAvailability();
  return availability.ok ? undefined : availability.reason;
}

/**
 * Boots the QEMU guest once and runs the given scenarios inside it (lab/vm/guest-main.ts),
 * each without and with conndrain (CONNDRAIN_LAB_VM_WITH=0: without only). Traffic scripts and
 * the agent (the whole CLI) go in as plain-JS bundles (fast starts under TCG); only the
 * orchestrator runs through tsx from the shared host tree.
 */
export async function runVmScenarios(scenarios: readonly VmScenario[], log: (message: string) => void, timeoutMs = 1_500_000): Promise<VmScenarioLine[]> {
  const bundleDir = await mkdtemp(join(tmpdir(), 'conndrain-lab-bundles-'));
  try {
    await bundleLabScripts(bundleDir);
    const agentBundle = await buildAgentBundle();
    const files: Record<string, string> = {};
    for (const name of await readdir(bundleDir)) files[name] = await readFile(join(bundleDir, name), 'utf8');
    const result = await runInGuest({ command: `node --conditions=conndrain-source --import tsx lab/vm/guest-main.ts ${scenarios.join(' ')}`, files, timeoutMs, memoryMb: 3072, env: { CONNDRAIN_LAB_VM_WITH: process.env.CONNDRAIN_LAB_VM_WITH ?? '1', CONNDRAIN_LAB_AGENT_BUNDLE: agentBundle } });
    for (const line of result.output.split('\n')) if (line.startsWith('[guest +')) log(line);
    const text = result.files['results.jsonl'] ?? '';
    const lines = text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as VmScenarioLine);
    if (lines.length === 0) throw new Error(`the guest reported nothing (exit ${result.exitCode}, timed out ${result.timedOut}):\n${result.output.slice(-4000)}`);
    return lines;
  } finally {
    await rm(bundleDir, { recursive: true, force: true });
  }
}
