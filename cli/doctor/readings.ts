import { readdir, readFile } from 'node:fs/promises';
import { release } from 'node:os';
import { probeFlowVisibility } from '../../agent/drain/flow-visibility-probe.js';
import { AGENT_METRICS } from '../../src/metric-names.js';
import { IPVS_SYSCTLS, NETFILTER_SYSCTLS, parseConntrackStat, sumMetric, type AgentReading, type DoctorReadings } from '../../src/doctor/index.js';
import { OwnershipIndex } from '../../src/stale/index.js';
import { openConntrack } from '../native-conntrack.js';
import { loadInventory } from '../stale/inventory.js';
import { scanStale, summarizeStale } from '../stale/scan.js';

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

function toNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Reads everything the doctor judges, in the current network namespace. Never throws. */
export async function gatherReadings(options: { agentUrl: string | undefined; endpoints: string | undefined; timeoutMs?: number }): Promise<DoctorReadings> {
  const netfilter: Record<string, string | undefined> = {};
  for (const name of NETFILTER_SYSCTLS) netfilter[name] = await readText(`/proc/sys/net/netfilter/${name}`);
  const statText = await readText('/proc/net/stat/nf_conntrack');
  return {
    conntrackCount: toNumber(await readText('/proc/sys/net/netfilter/nf_conntrack_count')),
    conntrackMax: toNumber(await readText('/proc/sys/net/netfilter/nf_conntrack_max')),
    cpus: statText === undefined ? undefined : parseConntrackStat(statText),
    netfilter,
    ipvs: await readIpvs(),
    kernelRelease: release(),
    agent: options.agentUrl === undefined ? undefined : await readAgent(options.agentUrl, options.timeoutMs ?? 2000),
    stale: options.endpoints === undefined ? undefined : await readStale(options.endpoints),
    flowVisibility: await probeFlowVisibility('auto'),
  };
}

async function readIpvs(): Promise<Record<string, string | undefined> | undefined> {
  try {
    await readdir('/proc/sys/net/ipv4/vs');
  } catch {
    return undefined;
  }
  const values: Record<string, string | undefined> = {};
  for (const name of IPVS_SYSCTLS) values[name] = await readText(`/proc/sys/net/ipv4/vs/${name}`);
  return values;
}

async function readAgent(url: string, timeoutMs: number): Promise<AgentReading> {
  const base = url.replace(/\/+$/, '');
  let health: AgentReading['health'];
  try {
    const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    health = { status: response.status };
  } catch (error) {
    return { url: base, health: { error: errorCode(error) }, serversHeld: undefined };
  }
  let metrics: string | undefined;
  try {
    const response = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    metrics = response.ok ? await response.text() : undefined;
  } catch {
    metrics = undefined;
  }
  return {
    url: base,
    health,
    serversHeld: metrics === undefined ? await countHolds(base, timeoutMs) : sumMetric(metrics, AGENT_METRICS.ipvsServersHeld),
    ipvsAvailable: metrics === undefined ? undefined : sumMetric(metrics, AGENT_METRICS.ipvsAvailable),
  };
}

/** The held servers from the probes port's /debug/holds: /metrics there is not served, or needs a token. */
async function countHolds(base: string, timeoutMs: number): Promise<number | undefined> {
  try {
    const response = await fetch(`${base}/debug/holds`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return undefined;
    const holds: unknown = await response.json();
    return Array.isArray(holds) ? holds.length : undefined;
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (error instanceof Error && error.name === 'TimeoutError') return 'timeout';
  return error instanceof Error ? error.message : String(error);
}

async function readStale(endpoints: string): Promise<DoctorReadings['stale']> {
  try {
    const inventory = await loadInventory({ endpoints });
    const ownership = new OwnershipIndex();
    ownership.replaceAll(inventory.slices);
    const api = await openConntrack(undefined);
    try {
      return summarizeStale((await scanStale(api, ownership, inventory.podIps)).groups);
    } finally {
      api.close();
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
