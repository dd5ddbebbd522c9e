import { runDemo } from './demo.js';
import { DEFAULT_RESULTS_DIR } from './report/write-results.js';
import { isScenarioName, runLabScenario, SCENARIOS, type LabOutcome, type LabRunOptions } from './run.js';
import { findLabProblems, ROOT_REASON } from './sys/root.js';

/**
 * The one module `conndrain lab` and `conndrain demo` load (cli/commands/lab.ts, at run time
 * and only from a source checkout): the lab is not part of the compiled CLI or the images.
 * The CLI states the shape it loads (`LabEntry`); the lab never imports the CLI, so the two
 * meet at run time, and cli/commands/lab.test.ts checks that this object has that shape.
 */
export const lab = {
  scenarios: SCENARIOS,
  defaultResultsDir: DEFAULT_RESULTS_DIR,
  rootReason: ROOT_REASON,
  findProblems: findLabProblems,
  runScenario: (name: string, options: LabRunOptions): Promise<LabOutcome> => {
    if (!isScenarioName(name)) throw new Error(`unknown lab scenario "${name}"; one of: ${SCENARIOS.join(', ')}`);
    return runLabScenario(name, options);
  },
  runDemo,
};
