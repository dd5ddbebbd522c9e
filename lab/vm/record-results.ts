/**
 * Both VM scenarios in one guest boot, without and with conndrain, written to docs/lab-results
 * (the sample results the docs show):
 *   sudo npx tsx lab/vm/record-results.ts
 * `node test/run.mjs lab/scenarios.vm` runs the same and asserts the results instead.
 */
import { runAllVmScenarios } from '../run.js';
import { SAMPLE_RESULTS_DIR } from '../report/write-results.js';

const started = Date.now();
const outcomes = await runAllVmScenarios({ resultsDir: SAMPLE_RESULTS_DIR, command: 'npx tsx lab/vm/record-results.ts (both VM scenarios, one guest boot)', log: (message) => process.stderr.write(`${message}\n`) });
for (const outcome of outcomes) {
  process.stdout.write(`${outcome.table}\n${JSON.stringify(outcome.json)}\n`);
  for (const path of outcome.written) process.stderr.write(`wrote ${path}\n`);
}
process.stderr.write(`done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
