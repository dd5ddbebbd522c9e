import type { ConntrackApi, ConntrackEntry, ScanDnatOptions } from 'netlink-native/types';
import { classifyEntries, combineCandidates, type Classification } from './classify.js';
import type { Ownership } from './ownership.js';

/** EndpointSlice protocols (lower case) that a conntrack scan can tell apart. */
const SCAN_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const;

type OwnedTarget = ScanDnatOptions['ownedTargets'][number];

function isScanProtocol(protocol: string): protocol is (typeof SCAN_PROTOCOLS)[number] {
  return (SCAN_PROTOCOLS as readonly string[]).includes(protocol);
}

/** The netlink-native call a stale scan needs. */
export type DnatScanner = Pick<ConntrackApi, 'scanDnatEntries'>;

export interface StaleScanResult {
  classification: Classification;
  /** The scan call: the dump pass with C-side filtering, while the candidates were classified. */
  listMs: number;
  /** JavaScript time spent classifying candidates, most of it during the dump pass. */
  classifyMs: number;
}

/**
 * One dump pass, filtered in C to DNAT'ed entries whose target the endpoints do not own; the
 * candidates come over in batches while the pass goes on and are classified here (live pod IPs,
 * the ownership check again) as they come, so their JavaScript work overlaps the kernel's. A
 * protocol conntrack cannot name is passed as "every protocol" (the safe reading: never calls
 * such an address stale).
 */
export async function scanStaleEntries(api: DnatScanner, ownership: Ownership, podIps: ReadonlySet<string>): Promise<StaleScanResult> {
  // The cluster's targets, passed as the ownership gives them (no copy per target) unless a protocol needs widening.
  const ownedTargets = ownership.ownedTargets().map((t): OwnedTarget => {
    if (t.protocol === undefined || isScanProtocol(t.protocol)) return t as OwnedTarget;
    return 'ipv4' in t ? { ipv4: t.ipv4 } : { address: t.address };
  });
  const parts: Array<{ pass: number; classification: Classification }> = [];
  let classifyMs = 0;
  const classify = (entries: ConntrackEntry[], pass: number): void => {
    const started = performance.now();
    parts.push({ pass, classification: classifyEntries(entries, ownership, podIps) });
    classifyMs += performance.now() - started;
  };
  const t0 = performance.now();
  const result = await api.scanDnatEntries({ ownedTargets, onEntries: classify });
  const listMs = performance.now() - t0;
  const pass = result.pass;
  if (result.entries.length > 0) classify(result.entries, pass);
  const started = performance.now();
  const classification = combineCandidates(parts.filter((p) => p.pass === pass).map((p) => p.classification), result);
  classifyMs += performance.now() - started;
  return { classification, listMs, classifyMs };
}
