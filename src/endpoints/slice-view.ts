/**
 * What the agent reads of one `discovery.k8s.io/v1` EndpointSlice as it arrives: its Service,
 * its ports, and per endpoint the pod it stands for (targetRef.uid), its addresses, node and
 * the two conditions a drain reads (KEP-1672: `serving`, `terminating`). Parsed whole (JSON.parse
 * is about twice as fast as the byte mask here, as a slice is mostly what is read); what is not
 * read (managedFields, hints, zones) dies young.
 *
 * A view lives only while the index compares it with what it keeps: the index keeps every
 * slice of the cluster as rows of packed columns (endpoint-rows.ts), not as views.
 *
 * From the protobuf watch a slice's endpoints come encoded, each with a digest of its bytes
 * (`EncodedEndpoints`): an endpoint whose digest the index kept for that slice is not decoded,
 * the view answers for it from the kept row (`keptAt`). A readiness flip of a 75-endpoint
 * slice decodes one endpoint, not 75.
 */
import { SERVICE_LABEL_FLOW_PINNING, SERVICE_LABEL_FLOW_PINNING_OFF, SERVICE_LABEL_HOLD, SERVICE_LABEL_HOLD_DISABLED } from '../contract.js';
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

/** One endpoint as the API shows it (what viewSlice reads of it). */
export type RawEndpoint = NonNullable<RawSlice['endpoints']>[number];

/**
 * A slice's endpoints still encoded (the protobuf watch): `size` of them, endpoint i's 64-bit
 * digest in `digests[2i]` (high half) and `digests[2i + 1]` (low half), decoded on demand.
 */
export interface EncodedEndpoints {
  readonly size: number;
  readonly digests: Uint32Array;
  decode(i: number): RawEndpoint;
}

/** What the index keeps of one slice's endpoints: enough to stand for the byte-identical ones. */
export interface KeptEndpoints {
  /** The kept slice these answer for (the index checks that a view is upserted against it). */
  readonly source: object;
  /** How many endpoints are kept (positions 0 to size - 1). */
  readonly size: number;
  /** The kept position of an endpoint whose digest is (high, low), trying `hint` first; -1 when none. */
  find(high: number, low: number, hint: number): number;
  uidAt(j: number): string;
  refAt(j: number): string | undefined;
  nodeAt(j: number): string | undefined;
  addressListAt(j: number): string | readonly string[];
  flagsAt(j: number): number;
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
  /** The Service opted out (label `conndrain.io/hold=disabled`): read, never held or flushed. */
  readonly holdDisabled: boolean;
  readonly ports: readonly SlicePort[];
}

/** Whether two slices have the same Service, labels read here and ports. */
export function sameShape(a: SliceShape, b: SliceShape): boolean {
  return a.service === b.service && a.flowPinningOff === b.flowPinningOff && a.holdDisabled === b.holdDisabled
    && a.ports.length === b.ports.length && a.ports.every((p, i) => p.port === b.ports[i]?.port && p.protocol === b.ports[i]?.protocol);
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
    readonly holdDisabled: boolean,
    /** The decoded endpoints (`decodedAt`): every endpoint from JSON, only the decoded ones from the watch. */
    private readonly decoded: readonly DecodedEndpoint[],
    /** Endpoint i's digest halves at 2i, 2i + 1 (from the protobuf watch; undefined from JSON). */
    readonly digests?: Uint32Array,
    /**
     * Per endpoint, the kept position it is byte-identical to (then not decoded: `kept` answers
     * for it), or -2 - slot for a decoded one. Undefined (from JSON): endpoint i is slot i.
     */
    private readonly keptAt?: Int32Array,
    private readonly kept?: KeptEndpoints,
    /** How many endpoints the kept slice answers for (not decoded). */
    readonly keptCount = 0,
  ) {}

  get size(): number {
    return this.keptAt?.length ?? this.decoded.length;
  }

  /**
   * The position in the slice as the index keeps it of the endpoint byte-identical to endpoint
   * `i` (same pod, node, addresses and conditions), or -1 (decoded: compare it). Valid until the
   * index changes the kept slice.
   */
  keptPositionOf(i: number): number {
    const k = this.keptAt === undefined ? -1 : (this.keptAt[i] as number);
    return k >= 0 ? k : -1;
  }

  /** Decoded endpoint i (one the kept slice does not answer for). */
  private decodedAt(i: number): DecodedEndpoint {
    return this.decoded[this.keptAt === undefined ? i : -2 - (this.keptAt[i] as number)] as DecodedEndpoint;
  }

  /** The kept slice some endpoints stand for (`KeptEndpoints.source`), if any. */
  get keptSource(): object | undefined {
    return this.keptAt?.some((j) => j >= 0) === true ? this.kept?.source : undefined;
  }

  uidAt(i: number): string {
    const j = this.keptPositionOf(i);
    return j >= 0 ? (this.kept as KeptEndpoints).uidAt(j) : this.decodedAt(i).uid;
  }

  keyAt(i: number): string {
    return endpointKey(this.namespace, this.refAt(i), this.addressListAt(i));
  }

  nodeAt(i: number): string | undefined {
    const j = this.keptPositionOf(i);
    return j >= 0 ? (this.kept as KeptEndpoints).nodeAt(j) : this.decodedAt(i).node;
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
    const j = this.keptPositionOf(i);
    return j >= 0 ? (this.kept as KeptEndpoints).flagsAt(j) : this.decodedAt(i).flags;
  }

  /** The pod's name as the slice gives it (see `refs`), or undefined. */
  refAt(i: number): string | undefined {
    const j = this.keptPositionOf(i);
    return j >= 0 ? (this.kept as KeptEndpoints).refAt(j) : this.decodedAt(i).ref;
  }

  /** Endpoint `i`'s addresses as kept: one string, or an array of several. */
  addressListAt(i: number): string | readonly string[] {
    const j = this.keptPositionOf(i);
    return j >= 0 ? (this.kept as KeptEndpoints).addressListAt(j) : this.decodedAt(i).addresses;
  }

  endpoint(i: number): SliceEndpoint {
    return { uid: this.uidAt(i), key: this.keyAt(i), nodeName: this.nodeAt(i), addresses: this.addressesAt(i), serving: this.servingAt(i), terminating: this.terminatingAt(i) };
  }

  /** Every endpoint, materialized (tests). */
  get endpoints(): SliceEndpoint[] {
    return Array.from({ length: this.size }, (_, i) => this.endpoint(i));
  }
}

/** The raw slice as read (EndpointSliceLike plus the targetRef's uid, and from the protobuf watch its endpoints encoded). */
export type RawSlice = EndpointSliceLike & {
  endpoints?: Array<NonNullable<EndpointSliceLike['endpoints']>[number] & { targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string } | null }> | null;
  /** The endpoints still encoded, with digests (the same endpoints `endpoints` decodes). */
  readonly encoded?: EncodedEndpoints;
};

/** An endpoint viewSlice decoded: what it reads of it. */
interface DecodedEndpoint {
  /** The pod's uid (targetRef.uid); `namespace/name` or `address/<first address>` when the slice names none. */
  readonly uid: string;
  /** The pod's name (its namespace is the slice's), `namespace/name` when another, or undefined (then the addresses name it). */
  readonly ref: string | undefined;
  readonly node: string | undefined;
  /** One address as a string (the common case), several as an array. */
  readonly addresses: string | readonly string[];
  /** `CONDITION_SERVING` | `CONDITION_TERMINATING`. */
  readonly flags: number;
}

/** What viewSlice reads of endpoint `e` of a slice in `namespace`; undefined when it has no address (not kept). */
function decodeEndpoint(e: RawEndpoint, namespace: string): DecodedEndpoint | undefined {
  const addresses = (e.addresses ?? []).filter((a) => typeof a === 'string' && a.trim() !== '').map(normalizeIp);
  if (addresses.length === 0) return undefined;
  const ref = e.targetRef;
  const refNamespace = ref?.namespace ?? namespace;
  const ready = e.conditions?.ready;
  // The API: serving unset means "same as ready"; ready unset means ready.
  const serving = e.conditions?.serving ?? ready ?? true;
  const terminating = e.conditions?.terminating ?? false;
  return {
    uid: ref?.uid ?? (ref?.name === undefined ? `address/${addresses[0] ?? ''}` : `${refNamespace}/${ref.name}`),
    ref: ref?.name === undefined ? undefined : refNamespace === namespace ? ref.name : `${refNamespace}/${ref.name}`,
    node: typeof e.nodeName === 'string' ? e.nodeName : undefined,
    addresses: addresses.length === 1 ? (addresses[0] as string) : addresses,
    flags: (serving ? CONDITION_SERVING : 0) | (terminating ? CONDITION_TERMINATING : 0),
  };
}

/** The protocols as viewSlice keeps them: the API's names lowercased, the usual three without a new string per port and event. */
function lowerProtocol(protocol: string): string {
  switch (protocol) {
    case 'TCP': return 'tcp';
    case 'UDP': return 'udp';
    case 'SCTP': return 'sctp';
    default: return protocol.toLowerCase();
  }
}

let claimedBytes = new Uint8Array(128);

/** One byte per kept position, zeroed for `size` positions (grown when a slice is larger). */
function claimedScratch(size: number): Uint8Array {
  if (size > claimedBytes.length) claimedBytes = new Uint8Array(Math.max(size, 2 * claimedBytes.length));
  claimedBytes.fill(0, 0, size);
  return claimedBytes;
}

/**
 * The view of `raw`. `keptOf(key)`: what the index keeps of the slice with that key; an encoded
 * endpoint whose digest it kept is not decoded (see `keptPositionOf`).
 */
export function viewSlice(raw: RawSlice, keptOf?: (key: string) => KeptEndpoints | undefined): SliceView {
  const namespace = raw.metadata?.namespace ?? '';
  const key = `${namespace}/${raw.metadata?.name ?? ''}`;
  const serviceName = raw.metadata?.labels?.[SERVICE_NAME_LABEL];
  const ports: SlicePort[] = [];
  for (const p of raw.ports ?? []) {
    if (typeof p.port === 'number') ports.push({ port: p.port, protocol: lowerProtocol(p.protocol ?? 'TCP') });
  }
  // Only decoded endpoints are here: a readiness flip of a 75-endpoint slice decodes one.
  const decoded: DecodedEndpoint[] = [];
  const encoded = raw.encoded;
  let digests: Uint32Array | undefined;
  let keptAt: Int32Array | undefined;
  let keptCount = 0;
  const kept = encoded === undefined ? undefined : keptOf?.(key);
  if (encoded === undefined) {
    for (const e of raw.endpoints ?? []) {
      const d = decodeEndpoint(e, namespace);
      if (d !== undefined) decoded.push(d);
    }
  } else {
    // The encoded digests, unless an endpoint without addresses is dropped (then a copy, compacted).
    digests = encoded.digests;
    keptAt = new Int32Array(encoded.size);
    // Kept positions already stood for (one byte array reused: this runs for every watch event).
    const claimed = claimedScratch(kept?.size ?? 0);
    let n = 0;
    for (let i = 0; i < encoded.size; i++) {
      const high = encoded.digests[2 * i] as number;
      const low = encoded.digests[2 * i + 1] as number;
      let j = kept === undefined ? -1 : kept.find(high, low, n);
      // The pod listed twice with the same bytes: the second one is decoded and compared.
      if (j >= 0 && claimed[j] === 1) j = -1;
      if (j >= 0) {
        // Byte-identical to a kept endpoint (one without addresses is never kept): the kept row answers for it.
        claimed[j] = 1;
        keptCount += 1;
        keptAt[n] = j;
      } else {
        const d = decodeEndpoint(encoded.decode(i), namespace);
        if (d === undefined) {
          if (digests === encoded.digests) digests = digests.slice();
          continue;
        }
        keptAt[n] = -2 - decoded.length;
        decoded.push(d);
      }
      if (digests !== encoded.digests) {
        digests[2 * n] = high;
        digests[2 * n + 1] = low;
      }
      n += 1;
    }
    if (n < encoded.size) {
      digests = digests.slice(0, 2 * n);
      keptAt = keptAt.slice(0, n);
    }
  }
  return new SliceView(
    key, namespace,
    serviceName === undefined || serviceName === '' ? key : `${namespace}/${serviceName}`,
    ports,
    raw.metadata?.labels?.[SERVICE_LABEL_FLOW_PINNING] === SERVICE_LABEL_FLOW_PINNING_OFF,
    raw.metadata?.labels?.[SERVICE_LABEL_HOLD] === SERVICE_LABEL_HOLD_DISABLED,
    decoded, digests, keptAt, kept, keptCount,
  );
}
