/**
 * The node's IPVS real servers by address, and each service's servers in dump order, from the
 * last full scan: when a pod starts draining, its known servers are edited to 0 at once, before
 * the full scan (1,000 services = 1,000 netlink round trips) that catches the rest.
 *
 * On a node whose proxy runs in IPVS mode the table has a real server per endpoint of every
 * Service: 150,000 at 150,000 pods. Kept as the dump's objects (a destination, its address, an
 * entry of a Map by address, the service's order as key strings) that was ~450 bytes a server,
 * ~64 MiB on every node (bench/scale `--ipvs-table full`). So a server is a row of numbers
 * here: its service's number, address (a canonical IPv4 address packed; anything else as text
 * beside the columns), port, weight and the interned rest of its spec (forwarding, thresholds,
 * tunnel: one shape for nearly every server). Rows are contiguous per service in dump order, so
 * a service's order is its row range. `at(ip)` builds the few servers it answers on demand;
 * they carry no connection counts (a scan's counts are stale by the time a hold reads them, and
 * holds never did read them).
 */
import type { IpvsDestination, IpvsService } from 'netlink-native/types';
import { formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import { packIpv4, unpackIpv4 } from '../../src/store/ipv4.js';
import { hashInt, hashString, SlotTable } from '../../src/store/slot-table.js';
import { heldId, type HeldServer } from './held-server.js';
import type { ListedService } from './ipvs-scan.js';

export interface IndexedServer {
  service: IpvsService;
  dest: IpvsDestination;
}

/** What a server's spec has beside its address, port and weight (shared by nearly every server). */
type DestShape = Pick<IpvsDestination, 'family' | 'forwarding' | 'upperThreshold' | 'lowerThreshold' | 'tunnelType' | 'tunnelPort' | 'tunnelFlags'>;

const NO_SERVERS: readonly IndexedServer[] = Object.freeze([]);

/** The key an address is looked up by: a canonical IPv4 address packed, any other text lowercased. */
function hashAddress(address: string): number {
  const packed = packIpv4(address);
  return packed === undefined ? hashString(address.toLowerCase()) : hashInt(packed);
}

function sameShape(shape: DestShape, d: IpvsDestination): boolean {
  return shape.family === d.family && shape.forwarding === d.forwarding && shape.upperThreshold === d.upperThreshold && shape.lowerThreshold === d.lowerThreshold && shape.tunnelType === d.tunnelType && shape.tunnelPort === d.tunnelPort && shape.tunnelFlags === d.tunnelFlags;
}

/** One scan's rows, columns of equal length. */
class Rows {
  readonly service: Int32Array;
  readonly port: Int32Array;
  readonly weight: Int32Array;
  readonly shape: Int32Array;
  /** The packed IPv4 address; 0 with a `text` entry for any other address. */
  readonly ip4: Int32Array;
  readonly packed: Uint8Array;
  /** The address as dumped, of rows whose address is not a canonical IPv4 one. */
  readonly text = new Map<number, string>();

  constructor(n: number) {
    this.service = new Int32Array(n);
    this.port = new Int32Array(n);
    this.weight = new Int32Array(n);
    this.shape = new Int32Array(n);
    this.ip4 = new Int32Array(n);
    this.packed = new Uint8Array(n);
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
}

export class AddressIndex {
  private rows = new Rows(0);
  private byAddress = this.tableOver(this.rows);
  /** The scan's services (with servers listed), by number. */
  private services: IpvsService[] = [];
  /** A service's rows: [start[n], start[n + 1]). */
  private start = new Int32Array(1);
  /** formatServiceKey -> the service's number (the last listed under that key). */
  private numbers = new Map<string, number>();
  private shapes: DestShape[] = [];

  /** Replaces the index with what a full scan listed. */
  rebuild(listed: readonly ListedService[]): void {
    const withServers = listed.filter((l) => l.dests !== undefined);
    let n = 0;
    for (const l of withServers) n += l.dests?.length ?? 0;
    const rows = new Rows(n);
    const start = new Int32Array(withServers.length + 1);
    const numbers = new Map<string, number>();
    const shapes: DestShape[] = [];
    const shapeIds = new Map<string, number>();
    let row = 0;
    let last = -1;
    withServers.forEach((l, s) => {
      start[s] = row;
      numbers.set(formatServiceKey(l.service.key), s);
      for (const d of l.dests ?? []) {
        // Servers in a row nearly always share a shape: a key string only when it changes.
        let id = last >= 0 && sameShape(shapes[last] as DestShape, d) ? last : undefined;
        if (id === undefined) {
          const shape: DestShape = { family: d.family, forwarding: d.forwarding, upperThreshold: d.upperThreshold, lowerThreshold: d.lowerThreshold, tunnelType: d.tunnelType, tunnelPort: d.tunnelPort, tunnelFlags: d.tunnelFlags };
          const shapeKey = `${String(shape.family)} ${shape.forwarding} ${String(shape.upperThreshold)} ${String(shape.lowerThreshold)} ${shape.tunnelType} ${String(shape.tunnelPort)} ${String(shape.tunnelFlags)}`;
          id = shapeIds.get(shapeKey);
          if (id === undefined) {
            id = shapes.push(shape) - 1;
            shapeIds.set(shapeKey, id);
          }
          last = id;
        }
        rows.service[row] = s;
        rows.port[row] = d.port;
        rows.weight[row] = d.weight;
        rows.shape[row] = id;
        const packed = packIpv4(d.address);
        if (packed === undefined) rows.text.set(row, d.address);
        else {
          rows.ip4[row] = packed;
          rows.packed[row] = 1;
        }
        row += 1;
      }
    });
    start[withServers.length] = row;
    const table = this.tableOver(rows);
    for (let r = 0; r < n; r++) table.addSlot(r);
    this.rows = rows;
    this.byAddress = table;
    this.services = withServers.map((l) => l.service);
    this.start = start;
    this.numbers = numbers;
    this.shapes = shapes;
  }

  /** The servers with address `ip` (any case), as the last scan saw them (their weights as remembered since). */
  at(ip: string): readonly IndexedServer[] {
    const found = this.byAddress.slots(ip);
    if (found.length === 0) return NO_SERVERS;
    return found.map((row) => ({ service: this.services[this.rows.service[row] as number] as IpvsService, dest: this.destAt(row) }));
  }

  /** The service's servers in the last scan's dump order. */
  orderOf(id: string): string[] | undefined {
    const s = this.numbers.get(id);
    if (s === undefined) return undefined;
    const keys: string[] = [];
    for (let row = this.start[s] as number; row < (this.start[s + 1] as number); row++) keys.push(formatDestinationKey({ address: this.rows.address(row), port: this.rows.port[row] as number }));
    return keys;
  }

  /** Real servers indexed (tests). */
  get size(): number {
    return this.rows.port.length;
  }

  /**
   * Keeps the index's weight of a released server current: its next drain takes the original
   * weight to restore from the index, and the index's last scan may date from the drain (0).
   */
  rememberWeight(held: HeldServer, weight: number): void {
    const id = heldId(held.service, held.destination);
    for (const row of this.byAddress.slots(held.destination.address)) {
      const service = this.services[this.rows.service[row] as number];
      if (service !== undefined && heldId(service.key, { address: this.rows.address(row), port: this.rows.port[row] as number }) === id) this.rows.weight[row] = weight;
    }
  }

  private destAt(row: number): IpvsDestination {
    const shape = this.shapes[this.rows.shape[row] as number] as DestShape;
    return { ...shape, address: this.rows.address(row), port: this.rows.port[row] as number, weight: this.rows.weight[row] as number, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0 };
  }

  private tableOver(rows: Rows): SlotTable<string> {
    return new SlotTable<string>({
      hash: hashAddress,
      hashAt: (row) => rows.hashAt(row),
      matches: (row, address) => rows.holds(row, address),
      orderOf: (row) => row,
    });
  }
}
