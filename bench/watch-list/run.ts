/**
 * The first sync of the agent's pod watch via each path, side by side: a streaming list
 * (`--watch-list on`, sendInitialEvents) and a list from the watch cache (`--watch-list off`,
 * resourceVersion=0, decoded as it streams), against the API stand-in serving N managed pods
 * of ~6 KB each (bench/scale/api-child.ts). Per path, in a fresh process: time to synced and
 * the peak RSS (VmHWM) above the process's RSS before it asked anything.
 *   node --import tsx bench/watch-list/run.ts [--pods 10000] [--runs 3]
 * The watch runs under tsx here (not compiled): the baseline includes tsx; compare the deltas.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const REPO = new URL('../..', import.meta.url).pathname;
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const PODS = arg('pods', 10_000);
const RUNS = arg('runs', 3);

type Line = Record<string, unknown>;

function procStatusMb(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? NaN) / 1024;
}

/** A child printing JSON lines; `next(match)` waits for the first line (from now) that matches. */
function lines(proc: ChildProcessWithoutNullStreams): (match: (l: Line) => boolean, timeoutMs: number) => Promise<Line> {
  const seen: Line[] = [];
  let waiters: Array<{ match: (l: Line) => boolean; resolve: (l: Line) => void; reject: (e: Error) => void }> = [];
  createInterface({ input: proc.stdout }).on('line', (text) => {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      process.stderr.write(`${text}\n`);
      return;
    }
    seen.push(line);
    waiters = waiters.filter((w) => (w.match(line) ? (w.resolve(line), false) : true));
  });
  proc.stderr.pipe(process.stderr);
  proc.once('exit', (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`child exited (${String(code)}) first`));
  });
  return (match, timeoutMs) => {
    const found = seen.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)), reject: (e) => (clearTimeout(timer), reject(e)) });
    });
  };
}

const dir = mkdtempSync(join(tmpdir(), 'cd-watch-list-'));
const kubeconfig = join(dir, 'kubeconfig');
const api = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/scale/api-child.ts'), kubeconfig, String(PODS)], { cwd: REPO });
const apiNext = lines(api);
const results: Array<{ mode: string; via: string; seconds: number; baselineMb: number; peakMb: number }> = [];
try {
  await apiNext((l) => l.ev === 'ready', 600_000);
  for (let run = 0; run < RUNS; run++) {
    for (const mode of ['on', 'off']) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=conndrain-source', join(REPO, 'bench/watch-list/sync-child.ts'), kubeconfig, mode], { cwd: REPO });
      const next = lines(child);
      await next((l) => l.ev === 'start', 60_000);
      await new Promise((r) => setTimeout(r, 500));
      const pid = child.pid ?? 0;
      const baselineMb = procStatusMb(pid, 'VmRSS');
      const started = Date.now();
      child.stdin.write('go\n');
      const synced = await next((l) => l.ev === 'synced', 600_000);
      const peakMb = procStatusMb(pid, 'VmHWM');
      const via = await next((l) => l.msg === 'watch: initial pod state complete', 10_000);
      results.push({ mode, via: String(via.via), seconds: ((synced.t as number) - started) / 1000, baselineMb, peakMb });
      if (synced.pods !== PODS) throw new Error(`${mode}: synced ${String(synced.pods)} pods of ${PODS}`);
      child.stdin.end();
      await new Promise((r) => child.once('exit', r));
    }
  }
} finally {
  api.stdin.end();
  api.kill();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`first sync of the pod watch, ${PODS} managed pods of ~6 KB (bench/watch-list/run.ts, ${RUNS} runs per path)`);
console.log('| --watch-list | initial state via | first sync (s) | RSS before (MB) | peak RSS (MB) | peak above before (MB) |');
console.log('|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.mode} | ${r.via} | ${r.seconds.toFixed(2)} | ${r.baselineMb.toFixed(0)} | ${r.peakMb.toFixed(0)} | ${(r.peakMb - r.baselineMb).toFixed(0)} |`);
