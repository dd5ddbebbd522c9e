/**
 * What the agent keeps of one `discovery.k8s.io/v1` EndpointSlice: its Service, its ports, and
 * per endpoint the pod it stands for (targetRef.uid), its addresses, node and the two
 * conditions a drain reads (KEP-1672: `serving`, `terminating`). Parsed whole (JSON.parse is
 * about twice as fast as the byte mask here, as a slice is mostly what is kept); what is not
 * kept (managedFields, hints, zones) dies young.
 *
 * Every node keeps every slice of the cluster, so the endpoints are columns (one array per
 * field, the conditions as bits), not an object per endpoint, and a rewrite of a slice that
 * changed only conditions keeps the strings it already had (`adoptFrom`): a readiness flip
 * rewrites a whole slice, and what the old version held must not be allocated again.
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

const SERVING = 1;
const TERMINATING = 2;

export class SliceView {
  constructor(
    /** `namespace/name` of the slice. */
    readonly key: string,
    readonly namespace: string,
    /** `namespace/service`. */
    readonly service: string,
    readonly ports: readonly SlicePort[],
    /** The Service turned flow pinning off (its label, copied onto the slice). */
    readonly flowPinningOff: boolean,
    private readonly uids: string[],
    /** The pod's name (its namespace is the slice's), `namespace/name` when another, or undefined (then the addresses name it). */
    private readonly refs: Array<string | undefined>,
    private readonly nodes: Array<string | undefined>,
    /** One address as a string (the common case), several as an array. */
    private readonly addrs: Array<string | readonly string[]>,
    private readonly flags: Uint8Array,
  ) {}

  get size(): number {
    return this.uids.length;
  }

  uidAt(i: number): string {
    return this.uids[i] as string;
  }

  keyAt(i: number): string {
    const ref = this.refs[i];
    if (ref === undefined) return this.addressesAt(i).join(',');
    return ref.includes('/') ? ref : `${this.namespace}/${ref}`;
  }

  nodeAt(i: number): string | undefined {
    return this.nodes[i];
  }

  addressesAt(i: number): readonly string[] {
    const a = this.addrs[i] as string | readonly string[];
    return typeof a === 'string' ? [a] : a;
  }

  /** Calls `fn` with each address of endpoint `i` (no array for the common single address). */
  forEachAddress(i: number, fn: (address: string) => void): void {
    const a = this.addrs[i] as string | readonly string[];
    if (typeof a === 'string') fn(a);
    else for (const x of a) fn(x);
  }

  hasAddress(i: number, address: string): boolean {
    const a = this.addrs[i] as string | readonly string[];
    return typeof a === 'string' ? a === address : a.includes(address);
  }

  servingAt(i: number): boolean {
    return ((this.flags[i] as number) & SERVING) !== 0;
  }

  terminatingAt(i: number): boolean {
    return ((this.flags[i] as number) & TERMINATING) !== 0;
  }

  /** Draining (KEP-1672): terminating or not serving, never `!ready` (publishNotReadyAddresses hides it). */
  drainingAt(i: number): boolean {
    return this.terminatingAt(i) || !this.servingAt(i);
  }

  /** Where `uid` is in this slice, or -1 (`hint`: the position to try first). */
  indexOf(uid: string, hint = -1): number {
    if (hint >= 0 && this.uids[hint] === uid) return hint;
    return this.uids.indexOf(uid);
  }

  /** Endpoint `i` here and endpoint `j` of `other` name the same pod, node and addresses. */
  sameIdentity(i: number, other: SliceView, j: number): boolean {
    if (this.uids[i] !== other.uids[j] || this.refs[i] !== other.refs[j] || this.nodes[i] !== other.nodes[j]) return false;
    const a = this.addrs[i] as string | readonly string[];
    const b = other.addrs[j] as string | readonly string[];
    if (typeof a === 'string' || typeof b === 'string') return a === b;
    return a.length === b.length && a.every((x, k) => x === b[k]);
  }

  /** Endpoint `i` here and endpoint `j` of `other` are equal, conditions included. */
  sameEndpoint(i: number, other: SliceView, j: number): boolean {
    return this.flags[i] === other.flags[j] && this.sameIdentity(i, other, j);
  }

  /** Whether the Service, labels read here and ports equal `other`'s. */
  sameShape(other: SliceView): boolean {
    return this.service === other.service && this.flowPinningOff === other.flowPinningOff
      && this.ports.length === other.ports.length && this.ports.every((p, i) => p.port === other.ports[i]?.port && p.protocol === other.ports[i]?.protocol);
  }

  /** The same Service, ports and endpoints in the same order as `other`: only conditions may differ. */
  sameLayout(other: SliceView): boolean {
    if (this.size !== other.size || !this.sameShape(other)) return false;
    for (let i = 0; i < this.uids.length; i++) if (!this.sameIdentity(i, other, i)) return false;
    return true;
  }

  /** Takes `other`'s conditions (same layout): a readiness flip changes this view in place, allocating nothing that lives. */
  takeConditions(other: SliceView): void {
    this.flags.set(other.flags);
  }

  /**
   * Takes the strings of the endpoints `before` already had (same pod, node and addresses), so
   * that the ones just parsed die young; the ports too when they are equal.
   */
  adoptFrom(before: SliceView): SliceView {
    for (let i = 0; i < this.uids.length; i++) {
      const j = before.indexOf(this.uids[i] as string, i);
      if (j < 0 || !this.sameIdentity(i, before, j)) continue;
      this.uids[i] = before.uids[j] as string;
      this.refs[i] = before.refs[j];
      this.addrs[i] = before.addrs[j] as string | readonly string[];
    }
    return this.sameShape(before) ? new SliceView(this.key, this.namespace, this.service, before.ports, this.flowPinningOff, this.uids, this.refs, this.nodes, this.addrs, this.flags) : this;
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

/** Interns a string (node names: a few thousand, repeated in every slice). */
export type Intern = (s: string) => string;

const asIs: Intern = (s) => s;

export function viewSlice(raw: RawSlice, intern: Intern = asIs): SliceView {
  const namespace = raw.metadata?.namespace ?? '';
  const key = `${namespace}/${raw.metadata?.name ?? ''}`;
  const serviceName = raw.metadata?.labels?.[SERVICE_NAME_LABEL];
  const ports: SlicePort[] = [];
  for (const p of raw.ports ?? []) {
    if (typeof p.port === 'number') ports.push({ port: p.port, protocol: (p.protocol ?? 'TCP').toLowerCase() });
  }
  const uids: string[] = [];
  const refs: Array<string | undefined> = [];
  const nodes: Array<string | undefined> = [];
  const addrs: Array<string | readonly string[]> = [];
  const flags: number[] = [];
  for (const e of raw.endpoints ?? []) {
    const addresses = (e.addresses ?? []).filter((a) => typeof a === 'string' && a.trim() !== '').map(normalizeIp);
    if (addresses.length === 0) continue;
    const ref = e.targetRef;
    const refNamespace = ref?.namespace ?? namespace;
    const podRef = ref?.name === undefined ? undefined : refNamespace === namespace ? ref.name : `${refNamespace}/${ref.name}`;
    const ready = e.conditions?.ready;
    // The API: serving unset means "same as ready"; ready unset means ready.
    const serving = e.conditions?.serving ?? ready ?? true;
    const terminating = e.conditions?.terminating ?? false;
    uids.push(ref?.uid ?? (ref?.name === undefined ? `address/${addresses[0] ?? ''}` : `${refNamespace}/${ref.name}`));
    refs.push(podRef);
    nodes.push(typeof e.nodeName === 'string' ? intern(e.nodeName) : undefined);
    addrs.push(addresses.length === 1 ? (addresses[0] as string) : addresses);
    flags.push((serving ? SERVING : 0) | (terminating ? TERMINATING : 0));
  }
  return new SliceView(
    key, namespace,
    serviceName === undefined || serviceName === '' ? key : `${namespace}/${serviceName}`,
    ports,
    raw.metadata?.labels?.[SERVICE_LABEL_FLOW_PINNING] === SERVICE_LABEL_FLOW_PINNING_OFF,
    uids, refs, nodes, addrs, Uint8Array.from(flags),
  );
}
