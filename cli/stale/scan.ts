import { formatEndpoint, groupByService, scanStaleEntries, type Classification, type OwnershipIndex, type StaleGroup } from '../../src/stale/index.js';
import type { ConntrackHandle } from '../native-conntrack.js';

export interface StaleScan {
  classification: Classification;
  groups: StaleGroup[];
  listMs: number;
  classifyMs: number;
}

/** One dump pass filtered in C (scanDnatEntries), its candidates classified against the endpoints and live pod IPs as they come, then grouped. */
export async function scanStale(api: ConntrackHandle, ownership: OwnershipIndex, podIps: ReadonlySet<string>): Promise<StaleScan> {
  const scan = await scanStaleEntries(api, ownership, podIps);
  const t0 = performance.now();
  const groups = groupByService(scan.classification.stale, ownership);
  return { classification: scan.classification, groups, listMs: scan.listMs, classifyMs: scan.classifyMs + performance.now() - t0 };
}

/** Stale counts by protocol and the biggest services, for the doctor. */
export function summarizeStale(groups: readonly StaleGroup[]): { byProtocol: Record<string, number>; topServices: Array<{ service: string; count: number }> } {
  const byProtocol: Record<string, number> = {};
  for (const group of groups) byProtocol[group.service.protocol] = (byProtocol[group.service.protocol] ?? 0) + group.entries.length;
  const topServices = groups.slice(0, 5).map((g) => ({ service: `${g.service.protocol} ${formatEndpoint(g.service.address, g.service.port)}`, count: g.entries.length }));
  return { byProtocol, topServices };
}

