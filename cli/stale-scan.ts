import { classifyEntries, formatEndpoint, groupByService, type Classification, type OwnershipIndex, type StaleGroup } from '../src/stale/index.js';
import type { ConntrackEntry } from '../native/lib/types.js';
import type { ConntrackHandle } from './native-conntrack.js';

export interface StaleScan {
  classification: Classification;
  groups: StaleGroup[];
  entries: ConntrackEntry[];
  listMs: number;
  classifyMs: number;
}

/** One dump pass, then classification against the endpoints and live pod IPs. */
export async function scanStale(api: ConntrackHandle, ownership: OwnershipIndex, podIps: ReadonlySet<string>): Promise<StaleScan> {
  const t0 = performance.now();
  const entries = await api.listConntrack();
  const t1 = performance.now();
  const classification = classifyEntries(entries, ownership, podIps);
  const groups = groupByService(classification.stale, ownership);
  return { classification, groups, entries, listMs: t1 - t0, classifyMs: performance.now() - t1 };
}

/** Stale counts by protocol and the biggest services, for the doctor. */
export function summarizeStale(groups: readonly StaleGroup[]): { byProtocol: Record<string, number>; topServices: Array<{ service: string; count: number }> } {
  const byProtocol: Record<string, number> = {};
  for (const group of groups) byProtocol[group.service.protocol] = (byProtocol[group.service.protocol] ?? 0) + group.entries.length;
  const topServices = groups.slice(0, 5).map((g) => ({ service: `${g.service.protocol} ${formatEndpoint(g.service.address, g.service.port)}`, count: g.entries.length }));
  return { byProtocol, topServices };
}

