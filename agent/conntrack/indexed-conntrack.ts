/**
 * The agent's conntrack, served from the event index (netlink-native's ConntrackEventIndex,
 * --conntrack-events) where it can be trusted, from a table dump everywhere else. It is a
 * ConntrackApi, so the drain sessions (open-flow counts) and the ghost cleanup use it as they
 * used the dump:
 *
 * - `listConntrack({ addresses, match: origDst + replySrc })`, the open-flow question: the
 *   index's flows of those addresses when it answers `fresh` (every address watched, no event
 *   lost); otherwise the dump (counted as a fallback).
 * - `deleteConntrack(...)`, the ghost cleanup: the index deletes the indexed flows by exact
 *   tuple at once, then the same dump-pass delete as without the index runs as the
 *   verification pass; what it still finds is what the index missed (counted: leftovers).
 *   A stale index changes nothing but the leftovers count: the dump pass deletes everything.
 * - The watched set is what `watch(ips)` was last given: the IPs of every managed pod the agent
 *   knows and of every pod not yet flushed. Changes are applied one at a time, latest wins.
 */
import type { Logger } from 'pino';
import type {
  ConntrackApi,
  ConntrackEntry,
  ConntrackEventIndex,
  ConntrackIndexStats,
  DeleteConntrackOptions,
  DeleteConntrackResult,
  DeleteCountsByProtocol,
  ListConntrackOptions,
} from 'netlink-native/types';

export interface IndexHooks {
  /** The index could not answer (stale, an address not watched yet, an error): the dump did. */
  fallback?(use: 'flows' | 'cleanup', why: string): void;
  /** Entries the verification pass deleted after an index deletion (what the index missed). */
  verifyLeftovers?(n: number): void;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** The open-flow / ghost-entry question: both directions that point at a pod, nothing else asked. */
function isPodQuery(o: ListConntrackOptions | DeleteConntrackOptions | undefined): o is (ListConntrackOptions | DeleteConntrackOptions) & { addresses: string[] } {
  if (o === undefined || o.addresses === undefined || o.addresses.length === 0) return false;
  const match = new Set(o.match ?? []);
  return match.size === 2 && match.has('origDst') && match.has('replySrc') && o.zone === undefined;
}

function addCounts(into: Record<string, DeleteCountsByProtocol>, protocol: string, c: Partial<DeleteCountsByProtocol>): void {
  const row = (into[protocol] ??= { deleted: 0, alreadyGone: 0, failed: 0 });
  row.deleted += c.deleted ?? 0;
  row.alreadyGone += c.alreadyGone ?? 0;
  row.failed += c.failed ?? 0;
}

export class IndexedConntrack implements ConntrackApi {
  private watched = new Set<string>();
  private wanted = new Set<string>();
  private applying: Promise<void> | undefined;

  constructor(
    private readonly dump: ConntrackApi,
    private readonly index: ConntrackEventIndex,
    private readonly logger: Logger,
    private readonly hooks: IndexHooks = {},
  ) {}

  /** Sets the watched addresses (applied in the background; resolves once applied). */
  watch(ips: Iterable<string>): Promise<void> {
    const next = new Set(ips);
    if (sameSet(next, this.wanted)) return this.applying ?? Promise.resolve();
    this.wanted = next;
    this.applying ??= this.apply();
    return this.applying;
  }

  stats(): ConntrackIndexStats {
    return this.index.stats();
  }

  close(): void {
    this.index.close();
  }

  private async apply(): Promise<void> {
    try {
      while (!sameSet(this.wanted, this.watched)) {
        const target = this.wanted;
        try {
          await this.index.setWatchedAddresses([...target]);
          this.watched = target;
        } catch (error) {
          this.logger.warn({ err: error, addresses: target.size }, 'conntrack events: could not set the watched addresses; the dump answers meanwhile');
          return;
        }
      }
    } finally {
      this.applying = undefined;
    }
  }

  async listConntrack(options?: ListConntrackOptions): Promise<ConntrackEntry[]> {
    if (!isPodQuery(options) || options.protocols !== undefined || options.limit !== undefined) return this.dump.listConntrack(options);
    try {
      const answer = await this.index.flowsOf([...options.addresses]);
      if (answer.fresh) return answer.flows;
      this.hooks.fallback?.('flows', 'not fresh');
    } catch (error) {
      this.logger.warn({ err: error }, 'conntrack events: index query failed; counting from a dump');
      this.hooks.fallback?.('flows', 'error');
    }
    return this.dump.listConntrack(options);
  }

  async deleteConntrack(options: DeleteConntrackOptions): Promise<DeleteConntrackResult> {
    if (!isPodQuery(options) || options.dryRun === true) return this.dump.deleteConntrack(options);
    const started = performance.now();
    let byIndex: Awaited<ReturnType<ConntrackEventIndex['deleteFlowsOf']>> | undefined;
    try {
      byIndex = await this.index.deleteFlowsOf([...options.addresses]);
      if (!byIndex.fresh) this.hooks.fallback?.('cleanup', 'not fresh');
    } catch (error) {
      this.logger.warn({ err: error }, 'conntrack events: index delete failed; the dump pass deletes');
      this.hooks.fallback?.('cleanup', 'error');
    }
    // The verification pass: the same dump-pass delete as without the index.
    const verify = await this.dump.deleteConntrack(options);
    if (byIndex === undefined) return verify;
    if (byIndex.fresh && verify.deleted > 0) {
      this.logger.warn({ addresses: options.addresses, leftovers: verify.deleted }, 'conntrack events: the verification pass deleted entries the index had missed');
    }
    if (byIndex.fresh) this.hooks.verifyLeftovers?.(verify.deleted);
    const byProtocol: Record<string, DeleteCountsByProtocol> = {};
    // The index reports deleted-or-already-gone per protocol; its already-gone ones are few (entries expiring meanwhile).
    for (const [protocol, n] of Object.entries(byIndex.byProtocol)) addCounts(byProtocol, protocol, { deleted: n });
    for (const [protocol, c] of Object.entries(verify.byProtocol)) addCounts(byProtocol, protocol, c);
    const fromIndex = byIndex.deleted + byIndex.alreadyGone + byIndex.failed;
    return {
      scanned: verify.scanned,
      matched: fromIndex + verify.matched,
      deleted: byIndex.deleted + verify.deleted,
      alreadyGone: byIndex.alreadyGone + verify.alreadyGone,
      failed: byIndex.failed + verify.failed,
      byProtocol,
      ms: performance.now() - started,
    };
  }

  deleteConntrackEntries(...args: Parameters<ConntrackApi['deleteConntrackEntries']>): ReturnType<ConntrackApi['deleteConntrackEntries']> {
    return this.dump.deleteConntrackEntries(...args);
  }

  scanDnatEntries(...args: Parameters<ConntrackApi['scanDnatEntries']>): ReturnType<ConntrackApi['scanDnatEntries']> {
    return this.dump.scanDnatEntries(...args);
  }

  conntrackStats(): ReturnType<ConntrackApi['conntrackStats']> {
    return this.dump.conntrackStats();
  }
}
