/**
 * The address index's rows: a real server as numbers in columns (its service's number, port,
 * weight, the interned rest of its spec, and its address: a canonical IPv4 address packed, any
 * other as text beside the columns). The columns are the store's paged ones (PagedColumn): a
 * scan appends the servers of each service as it reads them, and growing copies nothing, so a
 * scan never holds the whole table as the dump's objects nor its columns twice.
 */
import { packIpv4, unpackIpv4 } from '../../src/store/ipv4.js';
import { PagedColumn } from '../../src/store/paged-column.js';
import { hashInt, hashString } from '../../src/store/slot-table.js';

export class AddressRows {
  private readonly serviceCol = new PagedColumn((n) => new Int32Array(n));
  private readonly portCol = new PagedColumn((n) => new Int32Array(n));
  private readonly weightCol = new PagedColumn((n) => new Int32Array(n));
  private readonly shapeCol = new PagedColumn((n) => new Int32Array(n));
  /** The packed IPv4 address; 0 with a `text` entry for any other address. */
  private readonly ip4 = new PagedColumn((n) => new Int32Array(n));
  private readonly packed = new PagedColumn((n) => new Uint8Array(n));
  /** The address as dumped, of rows whose address is not a canonical IPv4 one. */
  private readonly text = new Map<number, string>();
  /** Rows appended. */
  length = 0;

  /** Appends a row; returns its number. */
  append(service: number, address: string, port: number, weight: number, shape: number): number {
    const row = this.length;
    if (row === this.packed.capacity) for (const c of [this.serviceCol, this.portCol, this.weightCol, this.shapeCol, this.ip4, this.packed]) c.ensure(row + 1);
    this.serviceCol.set(row, service);
    this.portCol.set(row, port);
    this.weightCol.set(row, weight);
    this.shapeCol.set(row, shape);
    const packed = packIpv4(address);
    if (packed === undefined) this.text.set(row, address);
    else {
      this.ip4.set(row, packed);
      this.packed.set(row, 1);
    }
    this.length = row + 1;
    return row;
  }

  service(row: number): number {
    return this.serviceCol.get(row);
  }

  port(row: number): number {
    return this.portCol.get(row);
  }

  weight(row: number): number {
    return this.weightCol.get(row);
  }

  setWeight(row: number, weight: number): void {
    this.weightCol.set(row, weight);
  }

  shape(row: number): number {
    return this.shapeCol.get(row);
  }

  address(row: number): string {
    return this.packed.get(row) === 1 ? unpackIpv4(this.ip4.get(row)) : (this.text.get(row) ?? '');
  }

  hashAt(row: number): number {
    return this.packed.get(row) === 1 ? hashInt(this.ip4.get(row)) : hashString((this.text.get(row) ?? '').toLowerCase());
  }

  /** Whether row's address is `address` (any case). */
  holds(row: number, address: string): boolean {
    if (this.packed.get(row) === 1) return packIpv4(address) === this.ip4.get(row);
    return (this.text.get(row) ?? '').toLowerCase() === address.toLowerCase();
  }
}

/** The key an address is looked up by: a canonical IPv4 address packed, any other text lowercased. */
export function hashAddress(address: string): number {
  const packed = packIpv4(address);
  return packed === undefined ? hashString(address.toLowerCase()) : hashInt(packed);
}
