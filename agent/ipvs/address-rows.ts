/**
 * The address index's rows: a real server as numbers in columns of equal length (its
 * service's number, port, weight, the interned rest of its spec, and its address: a canonical
 * IPv4 address packed, any other as text beside the columns). The columns grow as a scan
 * appends the servers of each service it reads, so a scan never holds the whole table as
 * the dump's objects.
 */
import { packIpv4, unpackIpv4 } from '../../src/store/ipv4.js';
import { hashInt, hashString } from '../../src/store/slot-table.js';

/** The smallest capacity a scan starts with. */
const MIN_CAPACITY = 64;

export class AddressRows {
  service: Int32Array;
  port: Int32Array;
  weight: Int32Array;
  shape: Int32Array;
  /** The packed IPv4 address; 0 with a `text` entry for any other address. */
  ip4: Int32Array;
  packed: Uint8Array;
  /** The address as dumped, of rows whose address is not a canonical IPv4 one. */
  readonly text = new Map<number, string>();
  /** Rows appended. */
  length = 0;

  /** Room for `capacity` rows before the columns grow (a scan sizes it by the last one). */
  constructor(capacity: number) {
    const n = Math.max(0, capacity);
    this.service = new Int32Array(n);
    this.port = new Int32Array(n);
    this.weight = new Int32Array(n);
    this.shape = new Int32Array(n);
    this.ip4 = new Int32Array(n);
    this.packed = new Uint8Array(n);
  }

  /** Appends a row; returns its number. */
  append(service: number, address: string, port: number, weight: number, shape: number): number {
    if (this.length === this.port.length) this.resize(Math.max(MIN_CAPACITY, this.length * 2));
    const row = this.length;
    this.service[row] = service;
    this.port[row] = port;
    this.weight[row] = weight;
    this.shape[row] = shape;
    const packed = packIpv4(address);
    if (packed === undefined) {
      this.text.set(row, address);
      this.ip4[row] = 0;
      this.packed[row] = 0;
    } else {
      this.ip4[row] = packed;
      this.packed[row] = 1;
    }
    this.length = row + 1;
    return row;
  }

  /** Gives back the room a scan did not use, past a quarter of what it holds. */
  trim(): void {
    if (this.port.length > this.length + (this.length >> 2) + MIN_CAPACITY) this.resize(this.length);
  }

  address(row: number): string {
    return this.packed[row] === 1 ? unpackIpv4(this.ip4[row] as number) : (this.text.get(row) ?? '');
  }

  hashAt(row: number): number {
    return this.packed[row] === 1 ? hashInt(this.ip4[row] as number) : hashString((this.text.get(row) ?? '').toLowerCase());
  }

  /** Whether row's address is `address` (any case). */
  holds(row: number, address: string): boolean {
    if (this.packed[row] === 1) return packIpv4(address) === this.ip4[row];
    return (this.text.get(row) ?? '').toLowerCase() === address.toLowerCase();
  }

  private resize(capacity: number): void {
    const copy = <T extends Int32Array | Uint8Array>(old: T, next: T): T => {
      next.set(old.subarray(0, this.length));
      return next;
    };
    this.service = copy(this.service, new Int32Array(capacity));
    this.port = copy(this.port, new Int32Array(capacity));
    this.weight = copy(this.weight, new Int32Array(capacity));
    this.shape = copy(this.shape, new Int32Array(capacity));
    this.ip4 = copy(this.ip4, new Int32Array(capacity));
    this.packed = copy(this.packed, new Uint8Array(capacity));
  }
}

/** The key an address is looked up by: a canonical IPv4 address packed, any other text lowercased. */
export function hashAddress(address: string): number {
  const packed = packIpv4(address);
  return packed === undefined ? hashString(address.toLowerCase()) : hashInt(packed);
}
