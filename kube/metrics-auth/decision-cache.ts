/**
 * A small bounded cache of scrape decisions, keyed by a digest of the bearer token (the token
 * itself is never kept). Allowed decisions live longer than refusals, as in kube-rbac-proxy
 * and controller-runtime's delegating authorizer: a scraper is asked again soon after it was
 * granted access, and a refused one is not hammering the API server on every scrape. Failures
 * to reach the API are never cached. The oldest entry goes when the cache is full.
 */
import { createHash } from 'node:crypto';

export interface CacheTtls {
  allowedMs: number;
  deniedMs: number;
  maxEntries: number;
}

export const DEFAULT_CACHE_TTLS: CacheTtls = { allowedMs: 10_000, deniedMs: 2_000, maxEntries: 1024 };

export interface CachedDecision {
  status: 200 | 401 | 403;
  why: string;
}

export function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export class DecisionCache {
  private readonly entries = new Map<string, { decision: CachedDecision; expiresAtMs: number }>();

  constructor(
    private readonly ttls: CacheTtls,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CachedDecision | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.decision;
  }

  put(key: string, decision: CachedDecision): void {
    const ttl = decision.status === 200 ? this.ttls.allowedMs : this.ttls.deniedMs;
    if (ttl <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.ttls.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { decision, expiresAtMs: this.now() + ttl });
  }
}
