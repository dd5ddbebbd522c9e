/**
 * Every endpoint of every slice the index keeps, one row each, as packed columns: every node
 * keeps every endpoint of the cluster, so what a row costs is what the agent's memory grows by
 * per pod. Strings and a JS Map entry per endpoint (uid, address, two hash tables by uid and
 * by address) cost ~280 bytes; here a row is a 16-byte uid, a 4-byte IPv4 address, an interned
 * node, a condition byte, its place in the two slot tables and the pod's name as an interned
 * prefix and its last characters (name-column.ts): 87-91 bytes a row with the slot tables
 * (bench/endpoint-index).
 *
 * What a row keeps is what the index compares and answers with: uid (targetRef.uid), the pod's
 * name (for logs, and the GET that decides whether a pod that left its slices while serving
 * died), node, addresses, the two conditions, and the slice holding it. Addresses
 * other than a single canonical IPv4 one (IPv6, several addresses) are kept as text beside
 * the columns: the EndpointSlice controller writes one address an endpoint, and IPv6 slices
 * are the minority of a dual-stack cluster.
 *
 * Rows are reused (a free list), so `order` keeps the order rows were added in: a pod's rows
 * are visited in the order its slices listed it, whatever rows they got.
 */
import { hashId, IdColumn } from '../store/id-column.js';
import { Interner } from '../store/interner.js';
import { packIpv4, unpackIpv4 } from '../store/ipv4.js';
import { PagedColumn } from '../store/paged-column.js';
import { NameColumn } from '../store/name-column.js';
import { hashInt, hashString, SlotTable } from '../store/slot-table.js';
import { CONDITION_SERVING, CONDITION_TERMINATING, isDrainingConditions, type SliceView } from './slice-view.js';

const CONDITIONS = CONDITION_SERVING | CONDITION_TERMINATING;
/** The row's first address is a canonical IPv4 address, in `ip4`. */
const PACKED = 4;
const USED = 8;

/** The hash of an address as a key of `byAddress`: a packed IPv4 address by its number. */
function hashAddress(address: string): number {
  const packed = packIpv4(address);
  return packed === undefined ? hashString(address) : hashInt(packed);
}

export class EndpointRows {
  private readonly uid = new IdColumn();
  private readonly flags = new PagedColumn((n) => new Uint8Array(n));
  private readonly ip4 = new PagedColumn((n) => new Int32Array(n));
  /** The node's interned id + 1; 0: the slice names no node. */
  private readonly node = new PagedColumn((n) => new Int32Array(n));
  private readonly slice = new PagedColumn((n) => new Int32Array(n));
  /** When the row was added (a counter that wraps: compared as serial numbers, `orderOf`). */
  private readonly order = new PagedColumn((n) => new Int32Array(n));
  /** The pod's name as the slice gives it (slice-view.ts `refs`): an interned prefix and the rest, packed. */
  private readonly refs = new NameColumn();
  /** The first address of a row whose first address is not packed. */
  private readonly textAddress = new Map<number, string>();
  /** Every address of a row that has several. */
  private readonly several = new Map<number, readonly string[]>();
  /** address -> the rows listing it after their first address (`byAddress` indexes first addresses). */
  private readonly laterHolders = new Map<string, number[]>();
  private readonly nodes = new Interner<string>((name) => name);
  private readonly free: number[] = [];
  private highWater = 0;
  private added = 0;
  private uids = 0;
  private readonly byUid = new SlotTable<string>({
    hash: hashId,
    hashAt: (row) => this.uid.hashAt(row),
    matches: (row, uid) => this.uid.matches(row, uid),
    orderOf: (row) => this.orderOf(row),
  });
  private readonly byAddress = new SlotTable<string>({
    hash: hashAddress,
    hashAt: (row) => ((this.flags.get(row) & PACKED) !== 0 ? hashInt(this.ip4.get(row)) : hashString(this.textAddress.get(row) ?? '')),
    matches: (row, address) => this.firstAddressIs(row, address),
    orderOf: (row) => this.orderOf(row),
  });

  /** Distinct uids over all rows. */
  get uidCount(): number {
    return this.uids;
  }

  /** Bytes of the columns and tables (not the text addresses). */
  get bytes(): number {
    return this.uid.bytes + this.refs.bytes + this.flags.bytes + this.ip4.bytes + this.node.bytes + this.slice.bytes + this.order.bytes + this.byUid.bytes + this.byAddress.bytes;
  }

  /** A new row for endpoint `i` of `view`, in slice `sliceId`. */
  add(sliceId: number, view: SliceView, i: number): number {
    const row = this.free.pop() ?? this.highWater++;
    this.uid.ensure(row + 1);
    this.flags.ensure(row + 1);
    this.ip4.ensure(row + 1);
    this.node.ensure(row + 1);
    this.slice.ensure(row + 1);
    this.order.ensure(row + 1);
    const uid = view.uidAt(i);
    const isNew = this.byUid.first(uid) === undefined;
    this.uid.set(row, uid);
    this.refs.set(row, view.refAt(i));
    const node = view.nodeAt(i);
    this.node.set(row, node === undefined ? 0 : this.nodes.acquire(node) + 1);
    this.slice.set(row, sliceId);
    this.order.set(row, this.added);
    this.added = (this.added + 1) | 0;
    const list = view.addressListAt(i);
    const first = typeof list === 'string' ? list : (list[0] as string);
    const packed = packIpv4(first);
    if (packed === undefined) this.textAddress.set(row, first);
    else this.ip4.set(row, packed);
    this.flags.set(row, USED | (packed === undefined ? 0 : PACKED) | (view.flagsAt(i) & CONDITIONS));
    this.byUid.add(uid, row);
    this.byAddress.add(first, row);
    if (typeof list !== 'string') {
      this.several.set(row, list);
      for (const later of list.slice(1)) {
        const rows = this.laterHolders.get(later);
        if (rows === undefined) this.laterHolders.set(later, [row]);
        else rows.push(row);
      }
    }
    if (isNew) this.uids += 1;
    return row;
  }

  /** Forgets a row (its slot is reused). */
  release(row: number): void {
    const uid = this.uidOf(row);
    this.byUid.delete(uid, row);
    if (this.byUid.first(uid) === undefined) this.uids -= 1;
    const list = this.addressListOf(row);
    this.byAddress.delete(typeof list === 'string' ? list : (list[0] as string), row);
    if (typeof list !== 'string') {
      for (const later of list.slice(1)) {
        const rows = this.laterHolders.get(later) ?? [];
        const at = rows.indexOf(row);
        if (at >= 0) rows.splice(at, 1);
        if (rows.length === 0) this.laterHolders.delete(later);
      }
    }
    const node = this.node.get(row);
    if (node > 0) this.nodes.release(node - 1);
    this.uid.set(row, undefined);
    this.refs.set(row, undefined);
    this.textAddress.delete(row);
    this.several.delete(row);
    this.flags.set(row, 0);
    this.free.push(row);
  }

  /** The rows listing `uid`, in the order they were added (into `out` when given: its contents are replaced). */
  rowsOf(uid: string, out?: number[]): number[] {
    return this.byUid.slots(uid, out);
  }

  hasUid(uid: string): boolean {
    return this.byUid.first(uid) !== undefined;
  }

  /** The rows listing `address` (first or later), in the order they were added. */
  rowsAt(address: string): number[] {
    const rows = this.byAddress.slots(address);
    const later = this.laterHolders.get(address);
    if (later === undefined) return rows;
    for (const row of later) if (!rows.includes(row)) rows.push(row);
    return rows.sort((a, b) => this.orderOf(a) - this.orderOf(b));
  }

  /** Every uid the rows list, once each (the first sync's plan, tests): a uid is yielded at the row its table finds first. */
  *distinctUids(): IterableIterator<string> {
    for (let row = 0; row < this.highWater; row++) {
      if ((this.flags.get(row) & USED) === 0) continue;
      const uid = this.uidOf(row);
      if (this.byUid.first(uid) === row) yield uid;
    }
  }

  uidOf(row: number): string {
    return this.uid.get(row) ?? '';
  }

  /** Whether `row` lists `uid`. */
  uidIs(row: number, uid: string): boolean {
    return this.uid.matches(row, uid);
  }

  sliceOf(row: number): number {
    return this.slice.get(row);
  }

  refOf(row: number): string | undefined {
    return this.refs.get(row);
  }

  nodeOf(row: number): string | undefined {
    const node = this.node.get(row);
    return node === 0 ? undefined : this.nodes.value(node - 1);
  }

  /** The row's addresses: one string, or an array of several. */
  addressListOf(row: number): string | readonly string[] {
    const several = this.several.get(row);
    if (several !== undefined) return several;
    return (this.flags.get(row) & PACKED) !== 0 ? unpackIpv4(this.ip4.get(row)) : (this.textAddress.get(row) ?? '');
  }

  /** The row's address as a number (ipv4.ts `packIpv4`) when it has one canonical IPv4 address; undefined otherwise. */
  packedIpv4(row: number): number | undefined {
    return (this.flags.get(row) & PACKED) !== 0 && !this.several.has(row) ? this.ip4.get(row) : undefined;
  }

  hasAddress(row: number, address: string): boolean {
    const several = this.several.get(row);
    return several === undefined ? this.firstAddressIs(row, address) : several.includes(address);
  }

  /** The condition bits (slice-view.ts `CONDITION_SERVING`, `CONDITION_TERMINATING`). */
  conditionsOf(row: number): number {
    return this.flags.get(row) & CONDITIONS;
  }

  setConditions(row: number, conditions: number): void {
    this.flags.set(row, (this.flags.get(row) & ~CONDITIONS) | (conditions & CONDITIONS));
  }

  servingAt(row: number): boolean {
    return (this.flags.get(row) & CONDITION_SERVING) !== 0;
  }

  terminatingAt(row: number): boolean {
    return (this.flags.get(row) & CONDITION_TERMINATING) !== 0;
  }

  /** Draining (KEP-1672): `isDrainingConditions`. */
  drainingAt(row: number): boolean {
    return isDrainingConditions(this.flags.get(row));
  }

  /** Whether `row` and endpoint `i` of `view` name the same pod (uid and name), node and addresses. */
  sameIdentity(row: number, view: SliceView, i: number): boolean {
    if (!this.uid.matches(row, view.uidAt(i)) || !this.refs.equals(row, view.refAt(i)) || this.nodeOf(row) !== view.nodeAt(i)) return false;
    const list = view.addressListAt(i);
    const several = this.several.get(row);
    if (typeof list === 'string') return several === undefined && this.firstAddressIs(row, list);
    return several !== undefined && several.length === list.length && several.every((a, k) => a === list[k]);
  }

  /** `sameIdentity`, and the same conditions. */
  sameEndpoint(row: number, view: SliceView, i: number): boolean {
    return this.conditionsOf(row) === (view.flagsAt(i) & CONDITIONS) && this.sameIdentity(row, view, i);
  }

  /**
   * The row's age as a number to sort by: how long after the newest row it was added, which
   * stays right when the counter wraps (rows living together are far less than 2^31 adds apart).
   */
  private orderOf(row: number): number {
    return (this.order.get(row) - this.added) | 0;
  }

  private firstAddressIs(row: number, address: string): boolean {
    const f = this.flags.get(row);
    if ((f & PACKED) === 0) return this.textAddress.get(row) === address;
    return packIpv4(address) === this.ip4.get(row);
  }
}
