import type { Command } from 'commander';
import { LAB_SCENARIOS } from '../command-listings.js';
import { CliExit } from '../exit.js';

/** What one lab scenario run hands back to the CLI. */
export interface LabScenarioOutcome {
  table: string;
  /** The object the `--json` line carries. */
  json: Record<string, unknown>;
  written: string[];
}

/**
 * What the lab (lab/entry.ts) gives the CLI. The lab never imports the CLI: it is checked
 * against this shape by cli/commands/lab.test.ts, on the CLI's side of the one direction.
 */
export interface LabEntry {
  scenarios: readonly string[];
  defaultResultsDir: string;
  /** Why the lab needs root, in one sentence. */
  rootReason: string;
  /** What is missing to run a scenario here; empty when everything is there. */
  findProblems: () => Promise<string[]>;
  runScenario: (name: string, options: { resultsDir: string | undefined; command: string; log: (message: string) => void }) => Promise<LabScenarioOutcome>;
  runDemo: (io: { log: (message: string) => void; write: (text: string) => void }) => Promise<void>;
}

/**
 * The lab's entry, resolved at run time on purpose: a specifier tsc cannot follow keeps lab/
 * (and the test/ helpers it uses) out of the compiled CLI and out of the images.
 */
const LAB_ENTRY: string = '../../lab/entry.js';

function progress(message: string): void {
  process.stderr.write(`[lab ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function loadLab(): Promise<LabEntry> {
  try {
    const module = (await import(LAB_ENTRY)) as { lab: LabEntry };
    return module.lab;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliExit(2, 'the lab is not part of this build (images, compiled CLI): run it from a source checkout with `npm run lab -- <scenario>` or `npm run demo`');
    }
    throw error;
  }
}

async function requireLab(lab: LabEntry): Promise<void> {
  const problems = await lab.findProblems();
  if (problems.length > 0) throw new CliExit(2, `conndrain lab cannot run here:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
}

/**
 * `conndrain lab <scenario> [--json]` and `conndrain demo`. The lab lives in lab/ and is
 * loaded lazily: builds without it (the images) still start every other command.
 */
export function defineLabCommand(lab: Command): void {
  lab
    .argument('<scenario>', LAB_SCENARIOS.join(' | '))
    .option('--json', 'print one JSON object with the figures as the last line')
    .option('--results-dir <dir>', 'write <scenario>.json/.md/.svg/.png here (default: lab/results)')
    .option('--no-results', 'write no result files')
    .action(async (scenario: string, options: { json?: boolean; resultsDir?: string; results: boolean }) => {
      const entry = await loadLab();
      if (!entry.scenarios.includes(scenario)) throw new CliExit(2, `unknown scenario "${scenario}"; one of: ${entry.scenarios.join(', ')}`);
      await requireLab(entry);
      const resultsDir = options.results ? (options.resultsDir ?? entry.defaultResultsDir) : undefined;
      const outcome = await entry.runScenario(scenario, { resultsDir, command: `conndrain lab ${scenario}${options.json === true ? ' --json' : ''}`, log: progress });
      process.stdout.write(`${outcome.table}\n`);
      for (const path of outcome.written) progress(`wrote ${path}`);
      if (options.json === true) process.stdout.write(`${JSON.stringify(outcome.json)}\n`);
    });
}

export function defineDemoCommand(demo: Command): void {
  demo.action(async () => {
    const entry = await loadLab();
    process.stdout.write(`conndrain demo: this needs root because ${entry.rootReason}\n\n`);
    await requireLab(entry);
    await entry.runDemo({ log: progress, write: (text) => process.stdout.write(text) });
  });
}
