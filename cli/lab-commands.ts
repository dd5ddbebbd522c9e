import type { Command } from 'commander';
import { CliExit } from './exit.js';

const SCENARIO_NAMES = ['ghost', 'maglev-drift', 'dsr-node-loss'];

function progress(message: string): void {
  process.stderr.write(`[lab ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function requireLab(): Promise<void> {
  const { findLabProblems } = await import('../test/lab/sys/root.js');
  const problems = await findLabProblems();
  if (problems.length > 0) throw new CliExit(2, `conndrain lab cannot run here:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
}

/**
 * `conndrain lab <scenario> [--json]` and `conndrain demo`. The lab lives in test/lab and is
 * loaded lazily: images without it (the webhook's) still start every other command.
 */
export function registerLabCommands(program: Command): void {
  program
    .command('lab')
    .description(`reproduce a field failure in network namespaces and measure it without and with conndrain (${SCENARIO_NAMES.join(', ')}); needs root`)
    .argument('<scenario>', SCENARIO_NAMES.join(' | '))
    .option('--json', 'print one JSON object with the figures as the last line')
    .option('--results-dir <dir>', 'write <scenario>.json/.md/.png here (default: test/lab/results)')
    .option('--no-results', 'write no result files')
    .action(async (scenario: string, options: { json?: boolean; resultsDir?: string; results: boolean }) => {
      const lab = await import('../test/lab/run.js');
      if (!lab.isScenarioName(scenario)) throw new CliExit(2, `unknown scenario "${scenario}"; one of: ${lab.SCENARIOS.join(', ')}`);
      await requireLab();
      const { DEFAULT_RESULTS_DIR } = await import('../test/lab/report/write-results.js');
      const resultsDir = options.results ? (options.resultsDir ?? DEFAULT_RESULTS_DIR) : undefined;
      const outcome = await lab.runLabScenario(scenario, { resultsDir, command: `conndrain lab ${scenario}${options.json === true ? ' --json' : ''}`, log: progress });
      process.stdout.write(`${outcome.table}\n`);
      for (const path of outcome.written) progress(`wrote ${path}`);
      if (options.json === true) process.stdout.write(`${JSON.stringify(outcome.json)}\n`);
    });

  program
    .command('demo')
    .description('the ghost-connection scenario before/after conndrain on this kernel, and the webhook injection on examples/deployment.yaml (needs root, under a minute)')
    .action(async () => {
      const { runDemo } = await import('../test/lab/demo.js');
      const { ROOT_REASON } = await import('../test/lab/sys/root.js');
      process.stdout.write(`conndrain demo: this needs root because ${ROOT_REASON}\n\n`);
      await requireLab();
      await runDemo({ log: progress, write: (text) => process.stdout.write(text) });
    });
}
