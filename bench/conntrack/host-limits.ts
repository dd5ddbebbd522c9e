/**
 * nf_conntrack_max and nf_conntrack_buckets are read-only inside a namespace: raise them from
 * the root namespace for the bench (the hash table is shared by all namespaces) and put the
 * old values back afterwards, also on Ctrl-C.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const MAX = '/proc/sys/net/netfilter/nf_conntrack_max';
const BUCKETS = '/proc/sys/net/netfilter/nf_conntrack_buckets';

export interface HostLimits {
  max: number;
  buckets: number;
}

export function readLimits(): HostLimits {
  return { max: Number(readFileSync(MAX, 'utf8').trim()), buckets: Number(readFileSync(BUCKETS, 'utf8').trim()) };
}

export function writeLimits(limits: HostLimits): void {
  writeFileSync(BUCKETS, String(limits.buckets));
  writeFileSync(MAX, String(limits.max));
}

/** Raises the limits (never lowers them); returns a function that restores the old values once. */
export function raiseLimits(wanted: HostLimits): () => void {
  const old = readLimits();
  writeLimits({ max: Math.max(old.max, wanted.max), buckets: Math.max(old.buckets, wanted.buckets) });
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    writeLimits(old);
  };
  const onSignal = (): void => {
    restore();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return restore;
}
