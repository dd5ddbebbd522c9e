/**
 * A column of pod names, each as an interned prefix and the rest packed (text-column.ts). A
 * workload's pods share their name up to the last `-` (a Deployment's pod is
 * `<ReplicaSet>-<5 characters>`, a StatefulSet's `<set>-<ordinal>`), so a Deployment's pod name
 * costs ~18 bytes (a 4-byte prefix id, the text column's 4-byte position and 5-byte header, its
 * last 5 characters) instead of ~33 for all 24 characters. Every name reads back exactly as written.
 */
import { Interner } from './interner.js';
import { PagedColumn } from './paged-column.js';
import { TextColumn } from './text-column.js';

/** Where a name's prefix ends (after its last `-`), or 0: no prefix. */
function cutOf(name: string): number {
  return name.lastIndexOf('-') + 1;
}

export class NameColumn {
  /** The prefix's interned id + 1; 0: none. */
  private readonly prefix = new PagedColumn((n) => new Int32Array(n));
  private readonly prefixes = new Interner<string>((p) => p);
  private readonly rest = new TextColumn();

  /** Bytes of the columns (not the interned prefixes, one string per workload). */
  get bytes(): number {
    return this.prefix.bytes + this.rest.bytes;
  }

  /** Stores `name` at `slot` (undefined: none). */
  set(slot: number, name: string | undefined): void {
    this.prefix.ensure(slot + 1);
    const old = this.prefix.get(slot);
    if (old > 0) this.prefixes.release(old - 1);
    const cut = name === undefined ? 0 : cutOf(name);
    this.prefix.set(slot, cut === 0 ? 0 : this.prefixes.acquire((name as string).slice(0, cut)) + 1);
    this.rest.set(slot, cut === 0 ? name : (name as string).slice(cut));
  }

  get(slot: number): string | undefined {
    const p = this.prefix.get(slot);
    const rest = this.rest.get(slot);
    return p === 0 ? rest : `${this.prefixes.value(p - 1)}${rest ?? ''}`;
  }

  /**
   * Whether `slot` holds exactly `name` (undefined: none), without building the stored one. The
   * stored rest has no `-` (the prefix ends at the last one), so a name equal to prefix + rest
   * splits where the stored one did: no need to find its cut.
   */
  equals(slot: number, name: string | undefined): boolean {
    const p = this.prefix.get(slot);
    if (p === 0 || name === undefined) return p === 0 && this.rest.equals(slot, name);
    const prefix = this.prefixes.value(p - 1);
    return name.startsWith(prefix) && this.rest.equals(slot, name, prefix.length);
  }
}
