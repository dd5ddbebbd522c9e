/**
 * Stale-entry scan vs one dump pass, on a 1M-entry table (root; a namespace of its own).
 *
 *   node --import tsx bench/stale/run.ts [--entries N] [--rounds R]
 *
 * Fills the table with netlink-native's batched test insert (the op bench/conntrack fills
 * with; limits raised from the root namespace with bench/conntrack/host-limits.ts and put
 * back), 1% of the DNAT targets owned by no endpoint. Then, side by side in each round:
 *   - floor:   `ip netns exec NS conntrack -L > /dev/null` (conntrack-tools' own dump),
 *   - dump:    one plain `listConntrack()` (netlink-native's dump into JS entries),
 *   - scan:    the stale scan the CLI and the janitor run: `listConntrack()` + classification
 *              against the EndpointSlice index + grouping by service.
 * The kernel does not keep IPS_DST_NAT on entries created through ctnetlink without NAT
 * attributes, so the scan's entries get the bit set before classification (outside the
 * timing): every entry then goes through the ownership lookups, the worst case.
 * Goal: scan <= one dump pass (ratios below; medians over the rounds).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { openNetlink, type ConntrackEntry } from '../../native/lib/index.js';
import { classifyEntries, groupByService, IPS_DST_NAT, OwnershipIndex, type EndpointSliceLike } from '../../src/stale/index.js';
import { raiseLimits } from '../conntrack/host-limits.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? undefined : Number(process.argv[i + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

const ENTRIES = arg('entries', 1_000_000);
const ROUNDS = arg('rounds', 2);
const BACKENDS = 1000;
const UNOWNED = 10; // backends no endpoint owns: 1% of the entries are stale
const NS = `cd9b-${process.pid}`;

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

async function main(): Promise<void> {
  const restore = raiseLimits({ max: Math.ceil(ENTRIES * 1.2), buckets: 262_144 });
  execFileSync('ip', ['netns', 'add', NS]);
  const api = openNetlink({ netns: NS });
  try {
    let t0 = performance.now();
    const filled = await api.insertConntrackForTest([
      { protocol: 'udp', origSrc: '10.1.0.1', srcCount: 20_000, origDst: '10.96.0.10', dstPort: 8080, replySrc: '10.128.0.1', replySrcCount: BACKENDS, replySrcPort: 8080, count: ENTRIES, timeout: 3600, statusFlags: ['ASSURED', 'SEEN_REPLY'] },
    ]);
    if (filled.created !== ENTRIES) throw new Error(`fill: ${JSON.stringify(filled)}`);
    log(`filled ${filled.created} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const ownership = new OwnershipIndex();
    ownership.replaceAll(slices());

    const floor: number[] = [];
    const dump: number[] = [];
    const scan: number[] = [];
    const classify: number[] = [];
    let stale = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      t0 = performance.now();
      const r = spawnSync('sh', ['-c', `ip netns exec ${NS} conntrack -L > /dev/null 2>&1`]);
      floor.push(performance.now() - t0);
      if (r.status !== 0) throw new Error('conntrack -L failed');

      // Dump and scan alternate which goes first; nothing of one is alive during the other.
      const runDump = async (): Promise<void> => {
        const start = performance.now();
        const count = (await api.listConntrack()).length;
        dump.push(performance.now() - start);
        if (count !== ENTRIES) throw new Error(`listConntrack: ${count} entries`);
      };
      let listMs = 0;
      let classifyMs = 0;
      const runScan = async (): Promise<number> => {
        const start = performance.now();
        const entries: ConntrackEntry[] = await api.listConntrack();
        listMs = performance.now() - start;
        for (const e of entries) e.status |= IPS_DST_NAT; // untimed: see the header
        const t = performance.now();
        const result = classifyEntries(entries, ownership, new Set());
        groupByService(result.stale, ownership);
        classifyMs = performance.now() - t;
        classify.push(classifyMs);
        scan.push(listMs + classifyMs);
        return result.counts.stale;
      };
      let found: number;
      if (round % 2 === 1) {
        await runDump();
        found = await runScan();
      } else {
        found = await runScan();
        await runDump();
      }
      stale = found;
      log(`round ${round}: conntrack -L ${(floor.at(-1) ?? 0).toFixed(0)} ms, listConntrack ${(dump.at(-1) ?? 0).toFixed(0)} ms, scan ${(listMs + classifyMs).toFixed(0)} ms (list ${listMs.toFixed(0)} + classify ${classifyMs.toFixed(0)}), stale ${stale}`);
    }
    const figures = {
      entries: ENTRIES,
      rounds: ROUNDS,
      stale,
      floorMs: Math.round(median(floor)),
      dumpMs: Math.round(median(dump)),
      scanMs: Math.round(median(scan)),
      classifyMs: Math.round(median(classify)),
      scanOverDump: Math.round((median(scan) / median(dump)) * 100) / 100,
      scanOverFloor: Math.round((median(scan) / median(floor)) * 100) / 100,
      classifyOverDump: Math.round((median(classify) / median(dump)) * 1000) / 1000,
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    process.stdout.write([
      `stale scan bench: ${ENTRIES.toLocaleString('en')} entries, ${figures.stale.toLocaleString('en')} stale, median of ${ROUNDS} rounds (node ${process.version})`,
      `  conntrack -L > /dev/null   ${figures.floorMs} ms`,
      `  listConntrack (one dump)   ${figures.dumpMs} ms`,
      `  stale scan                 ${figures.scanMs} ms  (classification ${figures.classifyMs} ms)`,
      `  scan / dump  ${figures.scanOverDump}x   scan / conntrack -L  ${figures.scanOverFloor}x   classification / dump  ${figures.classifyOverDump}x`,
    ].join('\n') + '\n');
  } finally {
    api.close();
    spawnSync('ip', ['netns', 'del', NS]);
    restore();
  }
}

await main();
