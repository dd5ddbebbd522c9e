/**
 * Redraws the ghost chart of the sample results (docs/lab-results) from their JSON (the full series are in
 * it), without running the scenario again: for a change of the chart code.
 *   npx tsx lab/report/redraw-chart.ts [results-dir]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderChartSvg } from '../chart/line-chart.js';
import { ghostChart, type GhostResult } from './ghost-report.js';
import { SAMPLE_RESULTS_DIR } from './write-results.js';

const dir = process.argv[2] ?? SAMPLE_RESULTS_DIR;
const file = JSON.parse(await readFile(join(dir, 'ghost.json'), 'utf8')) as { result: GhostResult };
await writeFile(join(dir, 'ghost.svg'), await renderChartSvg(ghostChart(file.result)));
process.stdout.write(`wrote ${join(dir, 'ghost.svg')}\n`);
