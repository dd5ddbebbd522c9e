import { classifyCandidates, type Classification } from './classify.js';
import type { ConntrackEntryView } from './entry.js';
import type { OwnershipIndex } from './ownership.js';

/** EndpointSlice protocols (lower case) that a conntrack scan can tell apart. */
const SCAN_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const;
type ScanProtocol = (typeof SCAN_PROTOCOLS)[number];

/** The netlink-native call a stale scan needs (structural: src/ may not import native/). */
export interface DnatScanner {
  scanDnatEntries(options: { ownedTargets: Array<{ address: string; protocol?: ScanProtocol; port?: number }> }): Promise<{
    entries: ConntrackEntryView[];
    scanned: number;
    notNat: number;
    owned: number;
  }>;
}

export interface StaleScanResult {
  classification: Classification;
  /** The dump pass (C-side filtering included). */
  listMs: number;
  /** Classification of the candidates in JavaScript. */
  classifyMs: number;
}

/**
 * One dump pass, filtered in C to DNAT'ed entries whose target the endpoints do not own, then
 * classified here (live pod IPs, grouping). A protocol conntrack cannot name is passed as
 * "every protocol" (the safe reading: never calls such an address stale).
 */
export async function scanStaleEntries(api: DnatScanner, ownership: OwnershipIndex, podIps: ReadonlySet<string>): Promise<StaleScanResult> {
  const ownedTargets = ownership.ownedTargets().map((t) => {
    const protocol = SCAN_PROTOCOLS.find((p) => p === t.protocol);
    return protocol === undefined ? { address: t.address } : { address: t.address, protocol, ...(t.port === undefined ? {} : { port: t.port }) };
  });
  const t0 = performance.now();
  const result = await api.scanDnatEntries({ ownedTargets });
  const t1 = performance.now();
  const classification = classifyCandidates(result.entries, result, ownership, podIps);
  return { classification, listMs: t1 - t0, classifyMs: performance.now() - t1 };
}
