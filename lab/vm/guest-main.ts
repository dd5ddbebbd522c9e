/**
 * Runs VM scenarios inside the QEMU guest (real IPVS): `guest-main.ts <scenario>...`.
 * Each scenario runs without conndrain, then with it (see CONNDRAIN_LAB_VM_WITH below); every
 * result is appended as one JSON line to $CONNDRAIN_VM_JOB/results.jsonl, which the host reads.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScriptBundles } from '../sys/netns-process.js';
import { useAgentBundle } from '../sys/agent-bundle.js';
import { runMaglevDriftOnce } from '../scenarios/maglev-drift.js';
import { runDsrNodeLossOnce } from '../scenarios/dsr-node-loss.js';

const jobDir = process.env.CONNDRAIN_VM_JOB ?? '/tmp';
useScriptBundles(process.env.CONNDRAIN_LAB_BUNDLES ?? jobDir);
const results = join(jobDir, 'results.jsonl');
const started = Date.now();
const log = (message: string): void => {
  process.stdout.write(`[guest +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};

function record(line: Record<string, unknown>): void {
  appendFileSync(results, `${JSON.stringify(line)}\n`);
}

// Without and with conndrain by default; CONNDRAIN_LAB_VM_WITH=0 runs only the without runs,
// =only only the with runs (quicker, while working on the lab itself).
const withSetting = process.env.CONNDRAIN_LAB_VM_WITH ?? '1';
const withRequested = withSetting !== '0';
useAgentBundle(process.env.CONNDRAIN_LAB_AGENT_BUNDLE);
const modes = !withRequested ? [false] : withSetting === 'only' ? [true] : [false, true];
for (const scenario of process.argv.slice(2)) {
  for (const withConndrain of modes) {
    const mode = withConndrain ? 'with' : 'without';
    log(`${scenario}: ${mode} conndrain`);
    try {
      const result = scenario === 'maglev-drift' ? await runMaglevDriftOnce(withConndrain, log) : scenario === 'dsr-node-loss' ? await runDsrNodeLossOnce(withConndrain, log) : undefined;
      if (result === undefined) throw new Error(`unknown VM scenario ${scenario}`);
      record({ scenario, mode, result });
      log(`${scenario} ${mode}: ${JSON.stringify(result)}`);
    } catch (error) {
      record({ scenario, mode, error: (error as Error).stack ?? String(error) });
      log(`${scenario} ${mode} failed: ${(error as Error).stack ?? String(error)}`);
    }
  }
  if (!modes.includes(true)) record({ scenario, mode: 'with', skipped: withRequested ? '`conndrain agent` is not available in this checkout' : 'with-conndrain VM runs turned off (CONNDRAIN_LAB_VM_WITH=0)' });
}

