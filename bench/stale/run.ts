/**
 * Stale-entry scan vs one dump pass, on a 1M-entry table (root; a namespace of its own).
 *
 *   node --import tsx bench/stale/run.ts [--entries N] [--rounds R] [--with-list]
 *
 * Fills the table with netlink-native's batched test insert with real DNAT bindings
 * (CTA_NAT_DST: every entry has IPS_DST_NAT, as kube-proxy's service entries do; limits raised
 * from the root namespace with bench/conntrack/host-limits.ts and put back), 1% of the DNAT
 * targets owned by no endpoint. Then, side by side in each round (order alternating):
 *   - `conntrack -L > /dev/null` (conntrack-tools' own dump), for reference;
 *   - raw dump: one kernel dump pass through netlink-native, parsed in C, nothing built in
 *     JavaScript (`ct_list` with limit 0): THE BASELINE, one dump pass;
 *   - receive only: the same pass with nothing parsed (messages counted): the kernel's part,
 *     the floor under any pass (for reference: how much of a pass is ours at all);
 *   - stale scan: what `conndrain conntrack stale` and the janitor run: `scanDnatEntries`
 *     (one dump pass, DNAT + owned-target filter in C, JS objects for candidates only, handed
 *     over in batches while the pass runs and classified as they come) + grouping by service;
 *   - with --with-list: `listConntrack()` (every entry built as a JS object), the old scan's dump.
 * Every entry is DNAT'ed, so every entry goes through the owned-target lookup (worst case).
 * Goal: stale scan <= one dump pass (scan / raw dump <= 1.00; medians over the rounds).
 * Each pass also reports its thread's CPU time (getrusage RUSAGE_THREAD in the addon): user is
 * ours, sys is the kernel's (the table walk runs inside our recvmsg). CPU figures are what a
 * noisy machine disturbs least; the wall-clock ratio is the goal's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { openNetlink } from 'netlink-native';
import { groupByService, OwnershipIndex, scanStaleEntries, type DnatScanner, type EndpointSliceLike } from '../../src/stale/index.js';
import { raiseLimits } from '../conntrack/host-limits.js';
import { dumpPassOnly, insertConntrackForTest, receivePassOnly } from 'netlink-native/testing';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? undefined : Number(process.argv[i + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

const ENTRIES = arg('entries', 1_000_000);
const ROUNDS = arg('rounds', 2);
const BACKENDS = 1000;
const UNOWNED = 10; // backends no endpoint owns: 1% of the entries are stale
const WITH_LIST = process.argv.includes('--with-list');
const NS = `janitor-b${process.pid}`;

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** The fill's i-th reply source: 10.128.0.1 + i on the low 32 bits. */
function backendIp(i: number): string {
  const n = 0x0a800001 + i;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function slices(): EndpointSliceLike[] {
  const out: EndpointSliceLike[] = [];
  for (let s = 0; s < (BACKENDS - UNOWNED) / 99; s++) {
    const endpoints = [];
    for (let i = s * 99; i < Math.min((s + 1) * 99, BACKENDS - UNOWNED); i++) endpoints.push({ addresses: [backendIp(i)], conditions: { ready: true } });
    out.push({ metadata: { name: `web-${s}`, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } }, ports: [{ port: 8080, protocol: 'UDP' }], endpoints });
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

/** Thread CPU of a pass (user = ours, sys = the kernel's), ms. */
interface PassCpu { userMs: number; sysMs: number }

function medianCpu(cpu: PassCpu[]): PassCpu {
  return { userMs: Math.round(median(cpu.map((c) => c.userMs))), sysMs: Math.round(median(cpu.map((c) => c.sysMs))) };
}

function cpuLine(cpu: PassCpu[]): string {
  const m = medianCpu(cpu);
  return `user ${m.userMs} ms + sys ${m.sysMs} ms`;
}

async function main(): Promise<void> {
  const restore = raiseLimits({ max: Math.ceil(ENTRIES * 1.2), buckets: 262_144 });
  execFileSync('ip', ['netns', 'add', NS]);
  const api = openNetlink({ netns: NS });
  try {
    const t0 = performance.now();
    const filled = await insertConntrackForTest(api, [
      { protocol: 'udp', origSrc: '10.1.0.1', srcCount: 20_000, origDst: '10.96.0.10', dstPort: 8080, replySrc: '10.128.0.1', replySrcCount: BACKENDS, replySrcPort: 8080, count: ENTRIES, timeout: 3600, statusFlags: ['ASSURED', 'SEEN_REPLY'], dnat: true },
    ]);
    if (filled.created !== ENTRIES) throw new Error(`fill: ${JSON.stringify(filled)}`);
    log(`filled ${filled.created} DNAT'ed entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const ownership = new OwnershipIndex();
    ownership.replaceAll(slices());

    const floor: number[] = [];
    const receive: number[] = [];
    const receiveCpu: PassCpu[] = [];
    const rawCpu: PassCpu[] = [];
    const scanCpu: PassCpu[] = [];
    const raw: number[] = [];
    const scan: number[] = [];
    const scanDump: number[] = [];
    const classify: number[] = [];
    const classifyAll: number[] = [];
    const rawProcessCpu: number[] = [];
    const scanProcessCpu: number[] = [];
    const list: number[] = [];
    let stale = 0;
    const expectedStale = ENTRIES * (UNOWNED / BACKENDS);
    for (let round = 1; round <= ROUNDS; round++) {
      const runFloor = async (): Promise<void> => {
        const r = await timed(() => Promise.resolve(spawnSync('sh', ['-c', `ip netns exec ${NS} conntrack -L > /dev/null 2>&1`])));
        if (r.value.status !== 0) throw new Error('conntrack -L failed');
        floor.push(r.ms);
      };
      const runReceive = async (): Promise<void> => {
        const r = await timed(() => receivePassOnly(api));
        if (r.value.scanned !== ENTRIES) throw new Error(`receive only: ${r.value.scanned} entries`);
        receive.push(r.ms);
        receiveCpu.push(r.value);
      };
      const runRaw = async (): Promise<void> => {
        const cpu0 = process.cpuUsage();
        const r = await timed(() => dumpPassOnly(api));
        rawProcessCpu.push(cpuMs(process.cpuUsage(cpu0)));
        if (r.value.scanned !== ENTRIES) throw new Error(`raw dump: ${r.value.scanned} entries`);
        raw.push(r.ms);
        rawCpu.push(r.value);
      };
      // the scan's own pass CPU, as the addon measured it
      const scanner: DnatScanner = {
        scanDnatEntries: async (options) => {
          const result = await api.scanDnatEntries(options);
          scanCpu.push({ userMs: result.userMs ?? 0, sysMs: result.sysMs ?? 0 });
          return result;
        },
      };
      const runScan = async (): Promise<void> => {
        const cpu0 = process.cpuUsage();
        const r = await timed(async () => {
          const s = await scanStaleEntries(scanner, ownership, new Set());
          groupByService(s.classification.stale, ownership);
          return s;
        });
        scan.push(r.ms);
        scanProcessCpu.push(cpuMs(process.cpuUsage(cpu0)));
        scanDump.push(r.value.listMs);
        classify.push(r.ms - r.value.listMs);
        classifyAll.push(r.value.classifyMs);
        stale = r.value.classification.counts.stale;
        if (r.value.classification.scanned !== ENTRIES || stale !== expectedStale) throw new Error(`scan: ${r.value.classification.scanned} scanned, ${stale} stale (expected ${expectedStale})`);
      };
      const runList = async (): Promise<void> => {
        const r = await timed(async () => (await api.listConntrack()).length);
        if (r.value !== ENTRIES) throw new Error(`listConntrack: ${r.value} entries`);
        list.push(r.ms);
      };
      const order = [runFloor, runReceive, runRaw, runScan, ...(WITH_LIST ? [runList] : [])];
      if (round % 2 === 0) order.reverse();
      for (const step of order) await step();
      log(`round ${round}: conntrack -L ${(floor.at(-1) ?? 0).toFixed(0)} ms, receive only ${(receive.at(-1) ?? 0).toFixed(0)} ms, raw dump ${(raw.at(-1) ?? 0).toFixed(0)} ms, stale scan ${(scan.at(-1) ?? 0).toFixed(0)} ms${WITH_LIST ? `, listConntrack ${(list.at(-1) ?? 0).toFixed(0)} ms` : ''}, load ${loadavg()[0]?.toFixed(1) ?? '?'}`);
    }
    const ratio = (a: number[], b: number[]): number => Math.round((median(a) / median(b)) * 100) / 100;
    const figures = {
      entries: ENTRIES,
      rounds: ROUNDS,
      stale,
      loadAverage: loadavg()[0],
      conntrackLMs: Math.round(median(floor)),
      receiveOnlyMs: Math.round(median(receive)),
      rawDumpMs: Math.round(median(raw)),
      scanMs: Math.round(median(scan)),
      scanDumpMs: Math.round(median(scanDump)),
      scanJsMs: Math.round(median(classify)),
      scanClassifyMs: Math.round(median(classifyAll)),
      processCpuMs: { rawDump: Math.round(median(rawProcessCpu)), scan: Math.round(median(scanProcessCpu)) },
      ...(WITH_LIST ? { listConntrackMs: Math.round(median(list)) } : {}),
      scanOverRawDump: ratio(scan, raw),
      scanOverReceiveOnly: ratio(scan, receive),
      cpu: {
        receiveOnly: medianCpu(receiveCpu),
        rawDump: medianCpu(rawCpu),
        scanPass: medianCpu(scanCpu),
      },
      scanOverConntrackL: ratio(scan, floor),
      goalMet: median(scan) <= median(raw),
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.stdout.write([
      `stale scan bench: ${ENTRIES.toLocaleString('en')} DNAT'ed entries, ${figures.stale.toLocaleString('en')} stale, median of ${ROUNDS} rounds, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (node ${process.version})`,
      `  conntrack -L > /dev/null (reference)          ${figures.conntrackLMs} ms`,
      `  receive only, nothing parsed (kernel floor)   ${figures.receiveOnlyMs} ms  (thread CPU ${cpuLine(receiveCpu)})`,
      `  raw dump pass, nothing built in JS (baseline) ${figures.rawDumpMs} ms  (thread CPU ${cpuLine(rawCpu)})`,
      `  stale scan (dump+filter in C, candidates classified in JS as they come)  ${figures.scanMs} ms`,
      `      dump pass ${figures.scanDumpMs} ms (thread CPU ${cpuLine(scanCpu)}), JS classification ${figures.scanClassifyMs} ms of which ${figures.scanJsMs} ms after the pass`,
      `  process CPU (all threads): raw dump ${figures.processCpuMs.rawDump} ms, stale scan ${figures.processCpuMs.scan} ms`,
      ...(WITH_LIST ? [`  listConntrack() (every entry a JS object)    ${figures.listConntrackMs ?? 0} ms`] : []),
      `  scan / raw dump ${figures.scanOverRawDump}x   scan / receive only ${figures.scanOverReceiveOnly}x   scan / conntrack -L ${figures.scanOverConntrackL}x`,
      `  goal: stale scan <= one dump pass (scan / raw dump <= 1.00): ${figures.goalMet ? 'MET' : 'MISSED'}`,
    ].join('\n') + '\n');
  } finally {
    api.close();
    spawnSync('ip', ['netns', 'del', NS]);
    restore();
  }
}

await main();
