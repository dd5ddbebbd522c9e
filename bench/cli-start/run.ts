/**
 * CLI start-up: what `conndrain --version` and `--help` cost above `node -e 0`.
 *
 *   npm run build && node --import tsx bench/cli-start/run.ts [--runs N] [--compare <checkout>]
 *
 * Runs, round after round, `node -e 0` and the compiled CLI (the package's bin,
 * bin/conndrain.cjs, or bin/conndrain.mjs in a checkout from before it; built in dist/cli)
 * with `--version`, `--help` and `inject --help`, output to /dev/null, in a different order each
 * round; with --compare also the same commands from another checkout (its own build: the
 * before of a change). On a shared machine node's own start moves by a tenth of a second from
 * run to run, so the figure is each command's OVERHEAD: its wall time minus the `node -e 0`
 * of the same round, median and p90 over the rounds; CPU (user+sys, from /proc/self/stat's
 * children times: 10 ms ticks, so the mean) is what load disturbs least. Load average before
 * and after.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const REPO = new URL('../..', import.meta.url).pathname;
const TICK_MS = 10;
const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' }, compare: { type: 'string' } } });
const rounds = Number(values.runs);

interface Subject {
  label: string;
  args: string[];
  wall: number[];
  cpu: number[];
}

function subject(label: string, args: string[]): Subject {
  return { label, args, wall: [], cpu: [] };
}

function cliSubjects(checkout: string, tag: string): Subject[] {
  if (!existsSync(join(checkout, 'dist/cli/main.js'))) throw new Error(`${checkout}: no compiled CLI (dist/cli/main.js): run \`npm run build\` there`);
  // The package's bin: the CommonJS launcher with the fast path, or before it the ES module one.
  const bin = ['bin/conndrain.cjs', 'bin/conndrain.mjs'].map((path) => join(checkout, path)).find((path) => existsSync(path)) ?? join(checkout, 'bin/conndrain.mjs');
  return [
    subject(`conndrain --version${tag}`, [bin, '--version']),
    subject(`conndrain --help${tag}`, [bin, '--help']),
    subject(`conndrain inject --help${tag}`, [bin, 'inject', '--help']),
  ];
}

/** Children's user+sys CPU so far, in ms (fields 16 and 17 of /proc/self/stat, in ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function timeOnce(s: Subject): void {
  const cpuBefore = childrenCpuMs();
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, s.args, { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: '' } });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${s.label}: exit ${String(r.status)}`);
  s.wall.push(wall);
  s.cpu.push(childrenCpuMs() - cpuBefore);
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
const ms = (value: number): string => value.toFixed(0).padStart(5);

const baseline = subject('node -e 0', ['-e', '0']);
const subjects = [baseline, ...cliSubjects(REPO, ''), ...(values.compare === undefined ? [] : cliSubjects(resolve(values.compare), ' (compare)'))];
const loadBefore = loadavg();
for (let round = 0; round < rounds; round++) {
  const order = subjects.map((_, i) => subjects[(i + round) % subjects.length] as Subject);
  for (const s of order) timeOnce(s);
}
const loadAfter = loadavg();

console.log(`${String(rounds)} interleaved rounds, node ${process.version}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`);
console.log(`${'command'.padEnd(34)} wall median   p90 | overhead median   p90 | cpu mean  over`);
for (const s of subjects) {
  const overhead = s.wall.map((w, i) => w - (baseline.wall[i] ?? NaN));
  console.log(`${s.label.padEnd(34)}      ${ms(quantile(s.wall, 0.5))} ${ms(quantile(s.wall, 0.9))} |          ${ms(quantile(overhead, 0.5))} ${ms(quantile(overhead, 0.9))} |    ${ms(mean(s.cpu))} ${ms(mean(s.cpu) - mean(baseline.cpu))}`);
}
