import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderChartSvg, type ChartSpec } from '../chart/line-chart.js';

/** Where `conndrain lab` writes unless told otherwise: ignored by git, so a run leaves the tree clean. */
export const DEFAULT_RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** The sample results the docs show (docs/lab-results), written only when recorded on purpose. */
export const SAMPLE_RESULTS_DIR = fileURLToPath(new URL('../../docs/lab-results/', import.meta.url));

export interface ScenarioReport {
  scenario: string;
  /** The full result, series included. */
  result: unknown;
  /** The before/after table (Markdown). */
  table: string;
  chart?: ChartSpec;
  /** The command that produced it and where, for the Markdown file. */
  command: string;
  notes: string[];
}

/** Writes `<scenario>.json`, `<scenario>.md` and `<scenario>.svg` (the chart); returns the paths written. */
export async function writeScenarioResults(dir: string, report: ScenarioReport): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const base = join(dir, report.scenario);
  const written = [`${base}.json`, `${base}.md`];
  const when = new Date().toISOString();
  const load = loadavg()[0] ?? 0;
  await writeFile(`${base}.json`, `${JSON.stringify({ scenario: report.scenario, measuredAt: when, command: report.command, result: report.result }, null, 2)}\n`);
  const markdown = [
    `# Lab scenario \`${report.scenario}\``,
    '',
    `Measured ${when} with \`${report.command}\` (host kernel ${release()}, ${cpus().length} CPUs, load average ${load.toFixed(1)} when it finished${load > cpus().length ? ': other jobs shared the machine, timings are pessimistic' : ''}).`,
    '',
    report.table,
    '',
    ...(report.chart === undefined ? [] : [`![${report.scenario}](${report.scenario}.svg)`, '']),
    ...report.notes.map((note) => `- ${note}`),
    '',
  ].join('\n');
  await writeFile(`${base}.md`, markdown);
  if (report.chart !== undefined) {
    await writeFile(`${base}.svg`, await renderChartSvg(report.chart));
    written.push(`${base}.svg`);
  }
  return written;
}
