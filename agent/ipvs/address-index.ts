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
import { SlotTable } from '../../src/store/slot-table.js';
import { AddressRows, hashAddress } from './address-rows.js';
import { heldId, type HeldServer } from './held-server.js';

export interface IndexedServer {
  service: IpvsService;
  dest: IpvsDestination;
}

/** What a server's spec has beside its address, port and weight (shared by nearly every server). */
type DestShape = Pick<IpvsDestination, 'family' | 'forwarding' | 'upperThreshold' | 'lowerThreshold' | 'tunnelType' | 'tunnelPort' | 'tunnelFlags'>;

const NO_SERVERS: readonly IndexedServer[] = Object.freeze([]);

function sameShape(shape: DestShape, d: IpvsDestination): boolean {
  return shape.family === d.family && shape.forwarding === d.forwarding && shape.upperThreshold === d.upperThreshold && shape.lowerThreshold === d.lowerThreshold && shape.tunnelType === d.tunnelType && shape.tunnelPort === d.tunnelPort && shape.tunnelFlags === d.tunnelFlags;
}

function tableOver(rows: AddressRows): SlotTable<string> {
  return new SlotTable<string>({
    hash: hashAddress,
    hashAt: (row) => rows.hashAt(row),
    matches: (row, address) => rows.holds(row, address),
    orderOf: (row) => row,
  });
}

/**
 * A scan's index, filled service by service as the scan reads them (`add`), so that the
 * dump's objects of a service are garbage once it is added; `AddressIndex.replace` makes it
 * the index.
 */
export class AddressIndexBuilder {
  readonly rows = new AddressRows();
  readonly byAddress = tableOver(this.rows);
  readonly services: IpvsService[] = [];
  /** A service's rows: [start[n], start[n + 1]) once finished. */
  readonly start: number[] = [];
  readonly numbers = new Map<string, number>();
  readonly shapes: DestShape[] = [];
  private readonly shapeIds = new Map<string, number>();
  private lastShape = -1;

  /** Appends a service's servers in dump order (undefined: deleted while read, not indexed). */
  add(service: IpvsService, dests: readonly IpvsDestination[] | undefined): void {
    if (dests === undefined) return;
    const s = this.services.push(service) - 1;
    this.start.push(this.rows.length);
    this.numbers.set(formatServiceKey(service.key), s);
    for (const d of dests) this.byAddress.addSlot(this.rows.append(s, d.address, d.port, d.weight, this.shapeOf(d)));
  }

  /** The interned shape of `d`: servers in a row nearly always share one, so a key string only when it changes. */
  private shapeOf(d: IpvsDestination): number {
    const last = this.lastShape;
    if (last >= 0 && sameShape(this.shapes[last] as DestShape, d)) return last;
    const shape: DestShape = { family: d.family, forwarding: d.forwarding, upperThreshold: d.upperThreshold, lowerThreshold: d.lowerThreshold, tunnelType: d.tunnelType, tunnelPort: d.tunnelPort, tunnelFlags: d.tunnelFlags };
    const shapeKey = `${String(shape.family)} ${shape.forwarding} ${String(shape.upperThreshold)} ${String(shape.lowerThreshold)} ${shape.tunnelType} ${String(shape.tunnelPort)} ${String(shape.tunnelFlags)}`;
    let id = this.shapeIds.get(shapeKey);
    if (id === undefined) {
      id = this.shapes.push(shape) - 1;
      this.shapeIds.set(shapeKey, id);
    }
    this.lastShape = id;
    return id;
  }
}

export class AddressIndex {
  private rows = new AddressRows();
  private byAddress = tableOver(this.rows);
  /** The scan's services (with servers listed), by number. */
  private services: IpvsService[] = [];
  /** A service's rows: [start[n], start[n + 1]). */
  private start: readonly number[] = [0];
  /** formatServiceKey -> the service's number (the last listed under that key). */
  private numbers = new Map<string, number>();
  private shapes: DestShape[] = [];
  /** orderOf's lists of this scan, by service number. */
  private orders = new Map<number, readonly string[]>();

  /** Makes what a full scan added to `builder` the index. */
  replace(builder: AddressIndexBuilder): void {
    this.rows = builder.rows;
    this.byAddress = builder.byAddress;
    this.services = builder.services;
    this.start = [...builder.start, builder.rows.length];
    this.numbers = builder.numbers;
    this.shapes = builder.shapes;
    this.orders = new Map();
  }

  /** The servers with address `ip` (any case), as the last scan saw them (their weights as remembered since). */
  at(ip: string): readonly IndexedServer[] {
    const found = this.byAddress.slots(ip);
    if (found.length === 0) return NO_SERVERS;
    return found.map((row) => ({ service: this.services[this.rows.service(row)] as IpvsService, dest: this.destAt(row) }));
  }

  /**
   * The service's servers in the last scan's dump order: one list per service and scan, shared
   * by every hold made from that scan (a service's order is as long as its servers: 75 keys on
   * a node of an IPVS-mode cluster at 150,000 pods, for each of its draining pods).
   */
  orderOf(id: string): readonly string[] | undefined {
    const s = this.numbers.get(id);
    if (s === undefined) return undefined;
    let keys = this.orders.get(s);
    if (keys !== undefined) return keys;
    const built: string[] = [];
    for (let row = this.start[s] as number; row < (this.start[s + 1] as number); row++) built.push(formatDestinationKey({ address: this.rows.address(row), port: this.rows.port(row) }));
    keys = Object.freeze(built);
    this.orders.set(s, keys);
    return keys;
  }

  /** Real servers indexed (tests). */
  get size(): number {
    return this.rows.length;
  }

  /**
   * Keeps the index's weight of a released server current: its next drain takes the original
   * weight to restore from the index, and the index's last scan may date from the drain (0).
   */
  rememberWeight(held: HeldServer, weight: number): void {
    const id = heldId(held.service, held.destination);
    for (const row of this.byAddress.slots(held.destination.address)) {
      const service = this.services[this.rows.service(row)];
      if (service !== undefined && heldId(service.key, { address: this.rows.address(row), port: this.rows.port(row) }) === id) this.rows.setWeight(row, weight);
    }
  }

  private destAt(row: number): IpvsDestination {
    const shape = this.shapes[this.rows.shape(row)] as DestShape;
    return { ...shape, address: this.rows.address(row), port: this.rows.port(row), weight: this.rows.weight(row), activeConnections: 0, inactiveConnections: 0, persistentConnections: 0 };
  }
}
