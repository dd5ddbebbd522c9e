/**
 * What the agent reads of one `discovery.k8s.io/v1` EndpointSlice as it arrives: its Service,
 * its ports, and per endpoint the pod it stands for (targetRef.uid), its addresses, node and
 * the two conditions a drain reads (KEP-1672: `serving`, `terminating`). Parsed whole (JSON.parse
 * is about twice as fast as the byte mask here, as a slice is mostly what is read); what is not
 * read (managedFields, hints, zones) dies young.
 *
 * A view lives only while the index compares it with what it keeps: the index keeps every
 * slice of the cluster as rows of packed columns (endpoint-rows.ts), not as views.
 */
import { SERVICE_LABEL_FLOW_PINNING, SERVICE_LABEL_FLOW_PINNING_OFF } from '../contract.js';
import { normalizeIp } from '../pod/ips.js';
import { SERVICE_NAME_LABEL, type EndpointSliceLike } from '../stale/endpoint-slice.js';

export interface SlicePort {
  port: number;
  /** `tcp`, `udp` or `sctp`. */
  protocol: string;
}

/** One endpoint, materialized (tests and merges; the slice itself keeps columns). */
export interface SliceEndpoint {
  /** The pod's uid (targetRef.uid); `namespace/name` or the address when the slice names no uid. */
  uid: string;
  /** `namespace/name` of the pod, for logs. */
  key: string;
  nodeName: string | undefined;
  addresses: readonly string[];
  serving: boolean;
  terminating: boolean;
}

export const CONDITION_SERVING = 1;
export const CONDITION_TERMINATING = 2;

/** Draining (KEP-1672) from the condition bits: terminating or not serving, never `!ready` (publishNotReadyAddresses hides it). */
export function isDrainingConditions(conditions: number): boolean {
  return (conditions & CONDITION_TERMINATING) !== 0 || (conditions & CONDITION_SERVING) === 0;
}

/** `namespace/name` of an endpoint's pod from the slice's `ref` (see `refs`); its addresses when the slice names no pod. */
export function endpointKey(namespace: string, ref: string | undefined, addresses: string | readonly string[]): string {
  if (ref === undefined) return typeof addresses === 'string' ? addresses : addresses.join(',');
  return ref.includes('/') ? ref : `${namespace}/${ref}`;
}

/** What a slice says for all its endpoints: its Service, the labels read here, its ports. */
export interface SliceShape {
  readonly service: string;
  readonly flowPinningOff: boolean;
  readonly ports: readonly SlicePort[];
}

/** Whether two slices have the same Service, labels read here and ports. */
export function sameShape(a: SliceShape, b: SliceShape): boolean {
  return a.service === b.service && a.flowPinningOff === b.flowPinningOff
    && a.ports.length === b.ports.length && a.ports.every((p, i) => p.port === b.ports[i]?.port && p.protocol === b.ports[i]?.protocol);
}

/**
 * The endpoints of the slice the index keeps under the same key (endpoint-index.ts
 * `keptEndpoints`): a view decoded from bytes (slice-bytes.ts) takes an endpoint whose digest
 * one of them has from it instead of parsing it. Valid until the index next changes.
 */
export interface KeptEndpoints {
  readonly size: number;
  /** Two halves per kept endpoint, as EndpointBytes.digests; both 0: not known; undefined: none known. */
  readonly digests: Int32Array | undefined;
  uidAt(j: number): string;
  refAt(j: number): string | undefined;
  nodeAt(j: number): string | undefined;
  addressListAt(j: number): string | readonly string[];
  flagsAt(j: number): number;
}

export class SliceView implements SliceShape {
  constructor(
    /** `namespace/name` of the slice. */
    readonly key: string,
    readonly namespace: string,
    /** `namespace/service`. */
    readonly service: string,
    readonly ports: readonly SlicePort[],
    /** The Service turned flow pinning off (its label, copied onto the slice). */
    readonly flowPinningOff: boolean,
    private readonly uids: Array<string | undefined>,
    /** The pod's name (its namespace is the slice's), `namespace/name` when another, or undefined (then the addresses name it). */
    private readonly refs: Array<string | undefined>,
    private readonly nodes: Array<string | undefined>,
    /** One address as a string (the common case), several as an array. */
    private readonly addrs: Array<string | readonly string[] | undefined>,
    private readonly flags: Int32Array,
    /** Per endpoint, the position of the kept endpoint with its bytes (`basis`), or -1: parsed here. */
    private readonly kept: Int32Array,
    /** Per endpoint, the digest of its bytes (two halves; 0, 0 when it was not decoded from bytes). */
    readonly digests: Int32Array,
    /** What the endpoints taken by digest come from. */
    readonly basis: KeptEndpoints | undefined,
  ) {}

  get size(): number {
    return this.uids.length;
  }

  /** The position in `basis` of the kept endpoint whose bytes endpoint `i` has, or -1. */
  keptAt(i: number): number {
    return this.kept[i] as number;
  }

  uidAt(i: number): string {
    const j = this.kept[i] as number;
    return j < 0 ? (this.uids[i] as string) : (this.basis as KeptEndpoints).uidAt(j);
  }

  keyAt(i: number): string {
    return endpointKey(this.namespace, this.refAt(i), this.addressListAt(i));
  }

  nodeAt(i: number): string | undefined {
    const j = this.kept[i] as number;
    return j < 0 ? this.nodes[i] : (this.basis as KeptEndpoints).nodeAt(j);
  }

  addressesAt(i: number): readonly string[] {
    const a = this.addressListAt(i);
    return typeof a === 'string' ? [a] : a;
  }

  /** Calls `fn` with each address of endpoint `i` (no array for the common single address). */
  forEachAddress(i: number, fn: (address: string) => void): void {
    const a = this.addressListAt(i);
    if (typeof a === 'string') fn(a);
    else for (const x of a) fn(x);
  }

  hasAddress(i: number, address: string): boolean {
    const a = this.addressListAt(i);
    return typeof a === 'string' ? a === address : a.includes(address);
  }

  servingAt(i: number): boolean {
    return (this.flagsAt(i) & CONDITION_SERVING) !== 0;
  }

  terminatingAt(i: number): boolean {
    return (this.flagsAt(i) & CONDITION_TERMINATING) !== 0;
  }

  /** Draining (KEP-1672): `isDrainingConditions`. */
  drainingAt(i: number): boolean {
    return isDrainingConditions(this.flagsAt(i));
  }

  /** The two condition bits of endpoint `i` (what a kept row stores: `CONDITION_SERVING`, `CONDITION_TERMINATING`). */
  flagsAt(i: number): number {
    const j = this.kept[i] as number;
    return j < 0 ? (this.flags[i] as number) : (this.basis as KeptEndpoints).flagsAt(j);
  }

  /** The pod's name as the slice gives it (see `refs`), or undefined. */
  refAt(i: number): string | undefined {
    const j = this.kept[i] as number;
    return j < 0 ? this.refs[i] : (this.basis as KeptEndpoints).refAt(j);
  }

  /** Endpoint `i`'s addresses as kept: one string, or an array of several. */
  addressListAt(i: number): string | readonly string[] {
    const j = this.kept[i] as number;
    return j < 0 ? (this.addrs[i] as string | readonly string[]) : (this.basis as KeptEndpoints).addressListAt(j);
  }

  endpoint(i: number): SliceEndpoint {
    return { uid: this.uidAt(i), key: this.keyAt(i), nodeName: this.nodeAt(i), addresses: this.addressesAt(i), serving: this.servingAt(i), terminating: this.terminatingAt(i) };
  }

  /** Every endpoint, materialized (tests). */
  get endpoints(): SliceEndpoint[] {
    return this.uids.map((_, i) => this.endpoint(i));
  }
}

/** The raw slice as read (EndpointSliceLike plus the targetRef's uid). */
export type RawSlice = EndpointSliceLike & {
  endpoints?: Array<NonNullable<EndpointSliceLike['endpoints']>[number] & { targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string } | null }> | null;
};

type RawEndpoint = NonNullable<RawSlice['endpoints']>[number];

/** Where a slice decoded from its bytes (slice-bytes.ts) carries its view (a symbol: never a field of the API's). */
export const SLICE_VIEW: unique symbol = Symbol('conndrain.sliceView');

/** A slice's endpoints as bytes: a digest each (two halves, never both 0; read during buildView only), and each parsed on demand. */
export interface EndpointSource {
  readonly size: number;
  readonly digests: Int32Array;
  parse(i: number): unknown;
}

/** What the agent reads of a slice: the view a decoder built (`SLICE_VIEW`), else one of its parsed endpoints. */
export function viewSlice(raw: RawSlice): SliceView {
  return (raw as { [SLICE_VIEW]?: SliceView })[SLICE_VIEW] ?? buildView(raw, undefined, undefined);
}

/**
 * The view of a slice whose endpoints are `source` (else `raw.endpoints`). With `kept`, the
 * endpoints the index keeps under its key: an endpoint whose digest a kept one has is taken
 * from it (the next position first: a rewrite keeps the order), and only the others are parsed.
 */
export function buildView(raw: RawSlice, source: EndpointSource | undefined, kept: KeptEndpoints | undefined): SliceView {
  const namespace = raw.metadata?.namespace ?? '';
  const key = `${namespace}/${raw.metadata?.name ?? ''}`;
  const serviceName = raw.metadata?.labels?.[SERVICE_NAME_LABEL];
  const ports: SlicePort[] = [];
  for (const p of raw.ports ?? []) {
    if (typeof p.port === 'number') ports.push({ port: p.port, protocol: (p.protocol ?? 'TCP').toLowerCase() });
  }
  const out = new ViewColumns(source?.size ?? raw.endpoints?.length ?? 0);
  const bytes = source;
  if (bytes === undefined) {
    for (const e of raw.endpoints ?? []) out.parsed(e, namespace, 0, 0);
  } else {
    const match = kept?.digests === undefined ? undefined : new KeptMatch(kept, kept.digests);
    const { digests } = bytes;
    for (let s = 0; s < bytes.size; s++) {
      const x = digests[2 * s] as number;
      const y = digests[2 * s + 1] as number;
      const j = match?.take(x, y) ?? -1;
      if (j >= 0) out.reused(j, x, y);
      else out.parsed(bytes.parse(s) as RawEndpoint, namespace, x, y);
    }
  }
  return new SliceView(
    key, namespace,
    serviceName === undefined || serviceName === '' ? key : `${namespace}/${serviceName}`,
    ports,
    raw.metadata?.labels?.[SERVICE_LABEL_FLOW_PINNING] === SERVICE_LABEL_FLOW_PINNING_OFF,
    out.uids, out.refs, out.nodes, out.addrs, out.flags(), out.kept(), out.digests(),
    out.anyReused ? kept : undefined,
  );
}

/**
 * The columns of a view as they are filled. The numbers of all endpoints share one Int32Array
 * (positions taken, digests, condition bits): one buffer outside V8's heap a view, not three.
 */
class ViewColumns {
  readonly uids: Array<string | undefined> = [];
  readonly refs: Array<string | undefined> = [];
  readonly nodes: Array<string | undefined> = [];
  readonly addrs: Array<string | readonly string[] | undefined> = [];
  private readonly numbers: Int32Array;
  private n = 0;
  anyReused = false;

  /** At most `capacity` endpoints. */
  constructor(private readonly capacity: number) {
    this.numbers = new Int32Array(4 * capacity);
  }

  kept(): Int32Array {
    return this.numbers.subarray(0, this.n);
  }

  digests(): Int32Array {
    return this.numbers.subarray(this.capacity, this.capacity + 2 * this.n);
  }

  flags(): Int32Array {
    return this.numbers.subarray(3 * this.capacity, 3 * this.capacity + this.n);
  }

  reused(j: number, x: number, y: number): void {
    this.uids.push(undefined);
    this.refs.push(undefined);
    this.nodes.push(undefined);
    this.addrs.push(undefined);
    this.put(j, x, y, 0);
    this.anyReused = true;
  }

  /** An endpoint as the API gives it; one without an address is left out. */
  parsed(e: RawEndpoint, namespace: string, x: number, y: number): void {
    const addresses = (e.addresses ?? []).filter((a) => typeof a === 'string' && a.trim() !== '').map(normalizeIp);
    if (addresses.length === 0) return;
    const ref = e.targetRef;
    const refNamespace = ref?.namespace ?? namespace;
    const podRef = ref?.name === undefined ? undefined : refNamespace === namespace ? ref.name : `${refNamespace}/${ref.name}`;
    const ready = e.conditions?.ready;
    // The API: serving unset means "same as ready"; ready unset means ready.
    const serving = e.conditions?.serving ?? ready ?? true;
    const terminating = e.conditions?.terminating ?? false;
    this.uids.push(ref?.uid ?? (ref?.name === undefined ? `address/${addresses[0] ?? ''}` : `${refNamespace}/${ref.name}`));
    this.refs.push(podRef);
    this.nodes.push(typeof e.nodeName === 'string' ? e.nodeName : undefined);
    this.addrs.push(addresses.length === 1 ? (addresses[0]) : addresses);
    this.put(-1, x, y, (serving ? CONDITION_SERVING : 0) | (terminating ? CONDITION_TERMINATING : 0));
  }

  private put(kept: number, x: number, y: number, flags: number): void {
    const { numbers, capacity, n } = this;
    numbers[n] = kept;
    numbers[capacity + 2 * n] = x;
    numbers[capacity + 2 * n + 1] = y;
    numbers[3 * capacity + n] = flags;
    this.n = n + 1;
  }
}

/** Which kept endpoints a view took (KeptMatch), reused from view to view: a view is built in one go. */
let taken = new Uint8Array(1024);

/** Misses of the next position scanned for before a table of the digests is built (a slice reordered whole). */
const LINEAR_MISSES = 8;

/** Finds kept endpoints by digest: the next position first (a rewrite keeps the order), else by a table built on first need; each taken once. */
class KeptMatch {
  private next = 0;
  private misses = 0;
  private readonly taken: Uint8Array;
  private byDigest: Map<number, number[]> | undefined;

  constructor(
    private readonly kept: KeptEndpoints,
    private readonly d: Int32Array,
  ) {
    if (taken.length < kept.size) taken = new Uint8Array(2 * kept.size);
    taken.fill(0, 0, kept.size);
    this.taken = taken;
  }

  take(x: number, y: number): number {
    const { d } = this;
    let j = this.next;
    if (!(j < this.kept.size && this.taken[j] === 0 && d[2 * j] === x && d[2 * j + 1] === y)) {
      j = this.misses++ < LINEAR_MISSES ? this.scan(x, y) : this.lookUp(x, y);
      if (j < 0) return -1;
    }
    this.taken[j] = 1;
    this.next = j + 1;
    return j;
  }

  /** A changed endpoint, or one that moved (the rest after it shift by one): a scan of the digests, no table. */
  private scan(x: number, y: number): number {
    const { d } = this;
    for (let j = 0; j < this.kept.size; j++) if (this.taken[j] === 0 && d[2 * j] === x && d[2 * j + 1] === y) return j;
    return -1;
  }

  private lookUp(x: number, y: number): number {
    const { d } = this;
    for (const at of this.table().get(x) ?? []) if (this.taken[at] === 0 && d[2 * at + 1] === y) return at;
    return -1;
  }

  private table(): Map<number, number[]> {
    if (this.byDigest !== undefined) return this.byDigest;
    const table = new Map<number, number[]>();
    const { d } = this;
    for (let j = 0; j < this.kept.size; j++) {
      const x = d[2 * j] as number;
      if (x === 0 && d[2 * j + 1] === 0) continue;
      const list = table.get(x);
      if (list === undefined) table.set(x, [j]);
      else list.push(j);
    }
    this.byDigest = table;
    return table;
  }
}
