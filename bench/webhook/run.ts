/**
 * Webhook benchmark: `npx tsx bench/webhook/run.ts`
 *
 * Side by side in one run, both over keep-alive TLS 1.3 on loopback with autocannon:
 *   floor: a bare node:https server answering a fixed AdmissionReview
 *   ours:  POST /mutate of the real server with a realistic AdmissionReview (a Deployment's
 *          pod with three containers; the answer carries the JSON patch)
 *   ours via Express: the same /mutate handler mounted as an Express route (express-mutate.ts)
 * 1. throughput at saturation (10 connections), alternating floor/ours rounds, median of rounds
 * 2. fixed rate 500 req/s, open loop (bench/webhook/fixed-rate.ts: a request is due every
 *    2 ms whatever the server does, 16 keep-alive connections, 2 s warm-up, exact
 *    percentiles in microseconds), for both; the p99 goal is judged on the latency counted
 *    from each request's due time. autocannon's `overallRate` figures are printed beside
 *    them for reference only: that mode sends each second's quota as a burst (see fixed-rate.ts).
 * Goals (issue 2): ours >= 0.7x the floor's throughput; p99 < 10 ms at 500 req/s.
 * Options: BENCH_SECONDS (default 8), BENCH_ROUNDS (default 2), BENCH_RATE_SECONDS (default 10).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { createTestCa, installPair, issueServingPair } from '../../test/webhook/certs.js';
import { fixedRate, type FixedRateResult } from './fixed-rate.js';
import { realisticReview } from './review.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10);
const RATE = 500;
const ROOT = new URL('../../', import.meta.url).pathname;

interface Figures { requestsPerSecond: number; p50: number; p99: number; errors: number; non2xx: number; total: number; cpuMicrosPerRequest: number }

// eslint-disable-next-line prefer-const -- assigned once the child is up, read by serverCpu()
let lines: AsyncIterator<string>;
// eslint-disable-next-line prefer-const -- see above
let command: (text: string) => void;

/** The server process's CPU time (user + system, microseconds). */
async function serverCpu(): Promise<number> {
  command('cpu');
  const next = await lines.next();
  const usage = JSON.parse(String(next.value)) as { user: number; system: number };
  return usage.user + usage.system;
}

async function cannon(port: number, body: string, extra: Partial<autocannon.Options> = {}): Promise<Figures> {
  const cpuBefore = await serverCpu();
  const figures = await runCannon(port, body, extra);
  figures.cpuMicrosPerRequest = (await serverCpu() - cpuBefore) / Math.max(1, figures.total);
  return figures;
}

function runCannon(port: number, body: string, extra: Partial<autocannon.Options>): Promise<Figures> {
  return new Promise((resolve, reject) => {
    autocannon({
      url: `https://127.0.0.1:${port}/mutate`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 10,
      pipelining: 1,
      duration: SECONDS,
      ...extra,
    }, (error, result) => {
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      resolve({ requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx, total: result.requests.total, cpuMicrosPerRequest: 0 });
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const ca = createTestCa();
const certDir = mkdtempSync(join(tmpdir(), 'cdwh-bench-'));
installPair(certDir, issueServingPair(ca));
const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/webhook/servers.ts'), certDir], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
command = (text: string): void => {
  child.stdin.write(`${text}\n`);
};
const ports = JSON.parse(String((await lines.next()).value)) as { bare: number; bareParse: number; ours: number; oursViaExpress: number };
const body = JSON.stringify(realisticReview('e911857d-c318-11e8-bbad-025000000001'));
const fixedBody = body; // the floor reads the same bytes, then answers without looking at them

try {
  console.log(`webhook bench: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, request body ${body.length} bytes, ${SECONDS}s per run, ${ROUNDS} rounds`);
  // Warm up both (JIT, TLS session setup).
  await cannon(ports.bare, fixedBody, { duration: 2 });
  await cannon(ports.bareParse, body, { duration: 2 });
  await cannon(ports.ours, body, { duration: 2 });
  await cannon(ports.oursViaExpress, body, { duration: 2 });
  const floor: Figures[] = [];
  const ours: Figures[] = [];
  const viaExpress: Figures[] = [];
  const floorParse: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    floor.push(await cannon(ports.bare, fixedBody));
    floorParse.push(await cannon(ports.bareParse, body));
    ours.push(await cannon(ports.ours, body));
    viaExpress.push(await cannon(ports.oursViaExpress, body));
  }
  const viaExpressRps = median(viaExpress.map((f) => f.requestsPerSecond));
  const floorRps = median(floor.map((f) => f.requestsPerSecond));
  const oursRps = median(ours.map((f) => f.requestsPerSecond));
  const floorParseRps = median(floorParse.map((f) => f.requestsPerSecond));
  const failed = [...floor, ...floorParse, ...ours, ...viaExpress].reduce((n, f) => n + f.errors + f.non2xx, 0);
  const openLoop = async (port: number, requestBody: string): Promise<FixedRateResult & { cpuMicrosPerRequest: number }> => {
    const cpuBefore = await serverCpu();
    const result = await fixedRate({ port, body: requestBody, rate: RATE, seconds: RATE_SECONDS, warmupSeconds: 2, connections: 16 });
    // The warm-up requests are charged too: the server cannot tell them apart.
    return { ...result, cpuMicrosPerRequest: (await serverCpu() - cpuBefore) / (result.requests + 2 * RATE) };
  };
  const floorFixed = await openLoop(ports.bare, fixedBody);
  const oursFixed = await openLoop(ports.ours, body);
  const burst = { overallRate: RATE, connections: 10 };
  const floorBurst = await cannon(ports.bare, fixedBody, burst);
  const oursBurst = await cannon(ports.ours, body, burst);
  const row = (name: string, rps: number, f: Figures[]): string => `${name.padEnd(34)} ${rps.toFixed(0).padStart(8)} req/s   p50 ${median(f.map((x) => x.p50)).toFixed(0).padStart(3)} ms   p99 ${median(f.map((x) => x.p99)).toFixed(0).padStart(3)} ms   server CPU ${median(f.map((x) => x.cpuMicrosPerRequest)).toFixed(0).padStart(5)} us/request`;
  console.log('\nsaturation (10 keep-alive TLS connections, median of rounds; autocannon latencies in whole ms)');
  console.log(row('floor: bare node:https', floorRps, floor));
  console.log(row('reference: floor + JSON.parse only', floorParseRps, floorParse));
  console.log(row('ours: POST /mutate', oursRps, ours));
  console.log(row('ours, /mutate via Express', viaExpressRps, viaExpress));
  const cpuRatio = median(floor.map((f) => f.cpuMicrosPerRequest)) / median(ours.map((f) => f.cpuMicrosPerRequest));
  console.log(`ratio ours/floor: throughput ${(oursRps / floorRps).toFixed(2)}x (goal >= 0.70x); requests per server-CPU-second ${cpuRatio.toFixed(2)}x`);
  console.log(`ratio ours via Express/floor: throughput ${(viaExpressRps / floorRps).toFixed(2)}x`);
  console.log(`ratio reference/floor: throughput ${(floorParseRps / floorRps).toFixed(2)}x (parsing the review, and nothing else, already costs this much)`);
  const ms = (x: number): string => x.toFixed(2).padStart(7);
  const fixedRow = (name: string, f: FixedRateResult & { cpuMicrosPerRequest: number }): string[] => [
    `${name.padEnd(7)} from due time: p50 ${ms(f.fromDue.p50)}  p90 ${ms(f.fromDue.p90)}  p99 ${ms(f.fromDue.p99)}  p99.9 ${ms(f.fromDue.p999)}  max ${ms(f.fromDue.max)} ms`,
    `${''.padEnd(7)} service:       p50 ${ms(f.service.p50)}  p90 ${ms(f.service.p90)}  p99 ${ms(f.service.p99)}  p99.9 ${ms(f.service.p999)}  max ${ms(f.service.max)} ms`,
    `${''.padEnd(7)} ${f.requests} requests at ${f.requestsPerSecond.toFixed(0)} req/s, ${f.waitedForConnection} waited for a free connection, server CPU ${f.cpuMicrosPerRequest.toFixed(0)} us/request`,
  ];
  console.log(`\nfixed rate ${RATE} req/s, open loop (16 keep-alive connections, 2 s warm-up, ${RATE_SECONDS} s measured)`);
  for (const line of [...fixedRow('floor:', floorFixed), ...fixedRow('ours:', oursFixed)]) console.log(line);
  console.log(`goal: ours p99 from due time < 10 ms: ${oursFixed.fromDue.p99 < 10 ? 'met' : 'NOT met'} (${oursFixed.fromDue.p99.toFixed(2)} ms)`);
  console.log(`for reference, autocannon overallRate ${RATE} (bursts once a second, integer ms, 1 ms back-fill): floor p50 ${floorBurst.p50} p99 ${floorBurst.p99} ms; ours p50 ${oursBurst.p50} p99 ${oursBurst.p99} ms`);
  console.log(`load average after the run: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const fixedFailed = floorFixed.errors + floorFixed.non2xx + oursFixed.errors + oursFixed.non2xx + floorBurst.errors + floorBurst.non2xx + oursBurst.errors + oursBurst.non2xx;
  console.log(`\nfailed or non-2xx responses: ${failed + fixedFailed}`);
} finally {
  child.stdin.end();
  child.stdout.resume();
  await new Promise((resolve) => child.on('close', resolve));
  rmSync(certDir, { recursive: true, force: true });
  ca.cleanup();
}
