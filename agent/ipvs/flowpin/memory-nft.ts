/**
 * An in-memory stand-in for NftApi that keeps conndrain's table the way `nft -j list table`
 * would show it after each batch (for unit tests; the kernel test checks the real nft).
 */
import { NFT_FAMILY, NFT_TABLE, type NftBatch, type NftCommand } from '../../../src/flowpin/nft-ruleset.js';
import type { NftApi } from './nft.js';

export class MemoryNft implements NftApi {
  private table: NftCommand[] | undefined;
  readonly batches: NftBatch[] = [];
  /** Packets to report on each pin rule's counter, by mark. */
  readonly counters = new Map<number, number>();

  apply(batch: NftBatch): Promise<void> {
    this.batches.push(batch);
    let table = this.table === undefined ? undefined : [...this.table];
    for (const command of batch.nftables) {
      if ('metainfo' in command) continue;
      const add = (command as { add?: Record<string, Record<string, unknown>> }).add;
      const del = (command as { delete?: { table?: unknown } }).delete;
      if (del?.table !== undefined) {
        if (table === undefined) return Promise.reject(new Error('No such file or directory: table inet conndrain'));
        table = undefined;
      } else if (add?.table !== undefined) {
        table ??= [{ table: { family: NFT_FAMILY, name: NFT_TABLE, handle: 1 } }];
      } else if (add !== undefined && table !== undefined) {
        const [kind, body] = Object.entries(add)[0] ?? [];
        if (kind !== undefined && body !== undefined) table.push({ [kind]: { ...body, handle: table.length + 1 } });
      } else {
        return Promise.reject(new Error(`MemoryNft: unsupported command ${JSON.stringify(command)}`));
      }
    }
    this.table = table;
    return Promise.resolve();
  }

  listTable(): Promise<unknown> {
    if (this.table === undefined) return Promise.resolve(undefined);
    const items = this.table.map((item) => {
      const rule = (item as { rule?: { expr?: Record<string, unknown>[] } }).rule;
      if (rule?.expr === undefined) return item;
      const mark = rule.expr.map((e) => (e.mangle as { value?: number } | undefined)?.value).find((v) => v !== undefined);
      const expr = rule.expr.map((e) => ('counter' in e && mark !== undefined ? { counter: { packets: this.counters.get(mark) ?? 0, bytes: 0 } } : e));
      return { rule: { ...rule, expr } };
    });
    return Promise.resolve(structuredClone({ nftables: [{ metainfo: { json_schema_version: 1 } }, ...items] }));
  }

  get present(): boolean {
    return this.table !== undefined;
  }
}
