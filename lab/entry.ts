import type { LabEntry } from '../cli/commands/lab.js';
import { runDemo } from './demo.js';
import { DEFAULT_RESULTS_DIR } from './report/write-results.js';
import { isScenarioName, runLabScenario, SCENARIOS } from './run.js';
import { findLabProblems, ROOT_REASON } from './sys/root.js';

/**
 * The one module `conndrain lab` and `conndrain demo` load (cli/commands/lab.ts, at run time
 * and only from a source checkout): the lab is not part of the compiled CLI or the images.
 */
export const lab: LabEntry = {
  scenarios: SCENARIOS,
  defaultResultsDir: DEFAULT_RESULTS_DIR,
  rootReason: ROOT_REASON,
  findProblems: findLabProblems,
  runScenario: (name, options) => {
    if (!isScenarioName(name)) throw new Error(`unknown lab scenario "${name}"; one of: ${SCENARIOS.join(', ')}`);
    return runLabScenario(name, options);
  },
  runDemo,
};
