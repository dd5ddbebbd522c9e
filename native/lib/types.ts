/**
 * The contract of `netlink-native`: what the C addon and its in-memory stand-in both
 * implement. The agent codes against these interfaces only; one contract suite runs against
 * both implementations so the stand-in cannot drift from the kernel.
 */

export type IpFamily = 4 | 6;

/** Which address of an entry's tuples is compared with the address set. */
export type ConntrackMatch = 'origSrc' | 'origDst' | 'replySrc' | 'replyDst';

/**
 * The IP protocol numbers (IANA, include/uapi/linux/in.h) of the layer-4 (or encapsulation)
 * protocols conntrack entries carry, by the name conndrain gives them: the one table of
 * protocol names (the CLI's `--protocol` lists its keys in this order).
 */
export const PROTOCOL_NUMBERS = {
  tcp: 6,
  udp: 17,
  sctp: 132,
  ipip: 4,
  ipv6: 41,
  icmp: 1,
  icmpv6: 58,
  udplite: 136,
  dccp: 33,
  gre: 47,
} as const;

/** Layer-4 (or encapsulation) protocols an entry can carry, by name. */
export type ConntrackProtocol = keyof typeof PROTOCOL_NUMBERS;

/** The one name of a protocol number without a name in PROTOCOL_NUMBERS: `proto-<n>`. */
export type UnnamedProtocol = `proto-${number}`;

export interface ConntrackFilter {
  /** IPv4 and/or IPv6 addresses, any mix; matched in one pass against a hash set. */
  addresses: string[];
  /** An entry matches when any of these fields equals one of the addresses. */
  match: ConntrackMatch[];
  /** Only these protocols; all protocols when absent. */
  protocols?: ConntrackProtocol[];
  /** Only entries in this conntrack zone; every zone when absent. */
  zone?: number;
}

export interface DeleteConntrackOptions extends ConntrackFilter {
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
}

export interface DeleteConntrackResult {
  /** Entries the dump walked. */
  scanned: number;
  /** Entries that matched the filter. */
  matched: number;
  /** Entries the kernel acknowledged as deleted. */
  deleted: number;
  /** Deletes answered ENOENT and a GET then confirmed the entry gone: it expired or was removed meanwhile. */
  alreadyGone: number;
  /** Deletes that failed for another reason (never silently dropped). */
  failed: number;
  /** The same counts by protocol name (`proto-<n>` for protocols without a name); only protocols with a delete. */
  byProtocol: Record<string, DeleteCountsByProtocol>;
  /** Wall time of the whole call. */
  ms: number;
}

/**
 * One entry to delete by identity: its original tuple, protocol, family and zone, as
 * listConntrack returned it (a ConntrackEntry fits). With `id` the kernel deletes it only if
 * it is still that very entry (a newer flow reusing the tuple answers ENOENT: already gone).
 */
export interface ConntrackEntryRef {
  family: IpFamily;
  protocolNumber: number;
  original: ConntrackTuple;
  /**
   * Conntrack zone id (0 when absent). Alone it means a zone of both directions (CTA_ZONE);
   * with origZone it is only informative.
   */
  zone?: number;
  /**
   * The zone id of the entry's ORIGINAL direction (listConntrack's `origZone`): what the
   * kernel's lookup by the original tuple matches. 0 for an entry whose zone covers only the
   * reply direction (`--reply-zone`). When absent, `zone` is used, and an ENOENT answer is
   * re-checked in zone 0 too (the direction was not said).
   */
  origZone?: number;
  /** The zone id of the reply direction (informative; the delete needs only origZone). */
  replyZone?: number;
  /** The kernel's entry id (CTA_ID); recommended. */
  id?: number;
}

export interface DeleteCountsByProtocol {
  deleted: number;
  alreadyGone: number;
  failed: number;
}

export interface DeleteConntrackEntriesResult {
  /** Entries the kernel acknowledged as deleted. */
  deleted: number;
  /** Answered ENOENT and a GET of the tuple confirmed it: expired, deleted by someone else, or (with `id`) the tuple now belongs to a newer entry. An ENOENT for an entry still there (wrong zone) is `failed`. */
  alreadyGone: number;
  /** Deletes that failed for another reason. */
  failed: number;
  /** The same counts by protocol name (`proto-<n>` for protocols without a name); only protocols that were asked for. */
  byProtocol: Record<string, DeleteCountsByProtocol>;
  /** Wall time of the whole call. */
  ms: number;
}

export interface ConntrackTuple {
  src: string;
  dst: string;
  /** TCP/UDP/SCTP/UDPLITE/DCCP ports; absent for protocols without ports. */
  srcPort?: number;
  dstPort?: number;
  /** ICMP id/type/code when the protocol is ICMP or ICMPv6. */
  icmpId?: number;
  icmpType?: number;
  icmpCode?: number;
}

/**
 * `IPS_DST_NAT` (include/uapi/linux/netfilter/nf_conntrack_common.h): the entry's destination
 * was translated (its `status` has this bit; `statusFlags` names it `DST_NAT`).
 */
export const IPS_DST_NAT = 1 << 5;

export interface ConntrackEntry {
  family: IpFamily;
  /** The protocol's name, `proto-<n>` for a number without one (`protocolNumber` says which). */
  protocol: ConntrackProtocol | UnnamedProtocol;
  protocolNumber: number;
  original: ConntrackTuple;
  reply: ConntrackTuple;
  /** TCP state name in conntrack's words (`ESTABLISHED`, `TIME_WAIT`, ...); SCTP likewise. */
  state?: string;
  /** Seconds until the entry expires. */
  timeout: number;
  mark: number;
  /**
   * The entry's conntrack zone id (0: the default zone). An entry has one zone that covers
   * both directions (`conntrack --zone`, CTA_ZONE) or only one (`--orig-zone` / `--reply-zone`,
   * CTA_TUPLE_ZONE, as OVS/OVN use): origZone and replyZone say the id per direction (0 where
   * the zone does not apply). Both are always set by the addon and the stand-in (optional in
   * the type only so that hand-made entries of older code still fit).
   */
  zone: number;
  origZone?: number;
  replyZone?: number;
  /** Raw `IPS_*` status bits, and their names (`ASSURED`, `SEEN_REPLY`, `DST_NAT`, ...). */
  status: number;
  statusFlags: string[];
  /** The kernel's entry id. */
  id: number;
}

export interface ListConntrackOptions extends Partial<ConntrackFilter> {
  /** At most this many entries (the dump still ends cleanly). */
  limit?: number;
}

export interface ConntrackCpuStats {
  cpu: number;
  found: number;
  invalid: number;
  insert: number;
  insertFailed: number;
  drop: number;
  earlyDrop: number;
  error: number;
  searchRestart: number;
  clashResolve: number;
  chainTooLong: number;
}

export interface ConntrackStats {
  /** Entries in the table of this network namespace. */
  count: number;
  /** `nf_conntrack_max`. */
  max: number;
  perCpu: ConntrackCpuStats[];
}

/**
 * A target the cluster's endpoints own, for scanDnatEntries: an address on every protocol and
 * port (no protocol), every port of a protocol (no port), or one protocol and port.
 */
export interface OwnedAddressTarget {
  address: string;
  protocol?: ConntrackProtocol;
  port?: number;
}

/**
 * Many IPv4 addresses owned on the same protocol and port (a slice's endpoints on one of its
 * ports), each as a number (a.b.c.d = a<<24 | b<<16 | c<<8 | d, signed or not): a cluster's
 * targets without a string and an object per address.
 */
export interface OwnedIpv4Targets {
  ipv4: Int32Array | Uint32Array;
  protocol?: ConntrackProtocol;
  port?: number;
}

export type OwnedTarget = OwnedAddressTarget | OwnedIpv4Targets;

export interface ScanDnatOptions {
  /** Entries whose reply source (the DNAT target) one of these covers are counted, not returned. */
  ownedTargets: OwnedTarget[];
  /** At most this many candidates (the dump still ends cleanly). */
  limit?: number;
  /**
   * Hands the candidates over in batches while the dump pass goes on (so their JavaScript work
   * overlaps the kernel's), instead of in `entries`. `pass` numbers the dump pass: a dump the
   * kernel overran is restarted, and batches of an earlier pass are superseded by the later
   * pass's (the result's `pass` is the final one). Every candidate of the final pass is handed
   * over exactly once, all before the promise resolves. An exception thrown here ends the scan
   * with that exception once the pass is over.
   */
  onEntries?: (entries: ConntrackEntry[], pass: number) => void;
  /** Candidates per onEntries batch (default 1024). */
  batchSize?: number;
}

export interface ScanDnatResult {
  /** DNAT'ed entries (IPS_DST_NAT) whose reply source no owned target covers: the stale candidates (empty with onEntries). */
  entries: ConntrackEntry[];
  /** The final dump pass's number (0 unless the kernel overran the dump and it was restarted). */
  pass: number;
  /** Entries the dump walked. */
  scanned: number;
  /** Entries without IPS_DST_NAT. */
  notNat: number;
  /** DNAT'ed entries an owned target covers. */
  owned: number;
  ms: number;
  /** The addon only: the pass's thread CPU time, ours (userMs) and the kernel's (sysMs: the table walk runs in our recvmsg). */
  userMs?: number;
  sysMs?: number;
}

export interface ConntrackApi {
  deleteConntrack(options: DeleteConntrackOptions): Promise<DeleteConntrackResult>;
  /** Deletes exactly these entries (by original tuple + zone, and id when given), batched, without a dump pass. */
  deleteConntrackEntries(entries: readonly ConntrackEntryRef[]): Promise<DeleteConntrackEntriesResult>;
  listConntrack(options?: ListConntrackOptions): Promise<ConntrackEntry[]>;
  /**
   * One dump pass that returns only DNAT'ed entries whose reply source no owned target covers
   * (filtered in C: JavaScript builds objects for candidates only). Ownership follows
   * EndpointSlice semantics; an entry without ports is owned when any target has its address.
   */
  scanDnatEntries(options: ScanDnatOptions): Promise<ScanDnatResult>;
  conntrackStats(): Promise<ConntrackStats>;
}

/**
 * The event-indexed view of conntrack (issue #8): a subscription to ctnetlink events (new,
 * update, destroy) on its own socket, filtered in the kernel by a classic BPF program built for
 * the watched addresses, feeding an index of the live flows of those addresses. An entry
 * concerns an address when its ORIGINAL DESTINATION or its REPLY SOURCE is that address (direct
 * / IPIP traffic and DNATed service traffic), IPv4 and IPv6.
 *
 * The index is "fresh" only while no event may have been lost: an overrun of the event socket
 * (ENOBUFS) marks it stale until one filtered dump pass (resync) rebuilds it. Never treat an
 * empty answer from a stale index as "no flows": fall back to a dump (listConntrack).
 */
export interface ConntrackIndexFlows {
  /** false: events may have been lost (overrun), or an address is not watched; fall back to a dump. */
  fresh: boolean;
  /** Flows whose original destination or reply source is one of the addresses (each once). */
  flows: ConntrackEntry[];
  /** Entries refreshed by an exact-tuple GET (UDP/SCTP/other: their timeout tells when they were last seen). */
  refreshed: number;
}

export interface ConntrackIndexStats {
  watchedAddresses: number;
  /** Flows in the index now. */
  flows: number;
  /** Events read from the subscription socket (after the kernel-side filter). */
  events: number;
  /** Events read but concerning no watched address (the userspace check; ~0 with the BPF filter). */
  eventsFilteredOut: number;
  /** ENOBUFS on the event socket: the kernel dropped events. */
  overruns: number;
  /** Completed resynchronising dump passes. */
  resyncs: number;
  /** The index may have missed events: flowsOf answers fresh=false until a resync. */
  stale: boolean;
  /** Memory one indexed flow costs (record + hash bucket), bytes. */
  bytesPerFlow: number;
  /** Memory the index holds now (records and buckets, allocated capacity), bytes. */
  indexBytes: number;
  /** At most this many flows are indexed; beyond it the index turns stale (and counts flowsDropped). */
  maxFlows: number;
  flowsDropped: number;
  /** Where unrelated events are dropped: 'bpf' in the kernel, 'userspace' when the set is too large for classic BPF. */
  filter: 'bpf' | 'userspace';
  /** Instructions of the attached classic BPF program (0 in userspace mode). */
  filterInstructions: number;
  /** Entries deleted by exact tuple from the index / found already gone. */
  deletedByIndex: number;
  alreadyGone: number;
  /** Verification dump passes, and the entries they deleted that the index had missed. */
  verifyPasses: number;
  verifyDeleted: number;
  /** Exact-tuple GETs sent to refresh entries. */
  gets: number;
}

export interface ConntrackDeleteIndexedResult {
  /** The index was fresh for these addresses: run verify() when false. */
  fresh: boolean;
  deleted: number;
  /** ENOENT: the entry expired or was deleted meanwhile. */
  alreadyGone: number;
  failed: number;
  /** Deleted (or already gone) entries per protocol name. */
  byProtocol: Record<string, number>;
  ms: number;
}

export interface ConntrackVerifyResult {
  /** Entries the dump pass found and deleted: the ones the index missed. */
  deleted: number;
  alreadyGone: number;
  failed: number;
  /** Entries the dump walked. */
  scanned: number;
  ms: number;
}

export interface ConntrackEventIndex {
  /** Replaces the watched set: the kernel-side filter is swapped atomically, then ONE filtered
   * dump pass indexes the flows of newly added addresses (resolves when they are trustworthy).
   * Flows of removed addresses leave the index. */
  setWatchedAddresses(addresses: string[]): Promise<void>;
  /** The indexed flows of these addresses; entries that are not TCP get their current timeout by
   * an exact-tuple GET (and leave the index when the kernel says ENOENT). No table dump. */
  flowsOf(addresses: string[]): Promise<ConntrackIndexFlows>;
  /** Deletes every indexed flow of these addresses by exact original tuple + zone (+ id), batched. */
  deleteFlowsOf(addresses: string[]): Promise<ConntrackDeleteIndexedResult>;
  /** One dump pass for these addresses that deletes whatever is left (what the index missed). */
  verify(addresses: string[]): Promise<ConntrackVerifyResult>;
  /** One filtered dump pass over every watched address; clears `stale` unless events were lost meanwhile. */
  resync(): Promise<void>;
  /** A snapshot of the counters (synchronous, cheap). */
  stats(): ConntrackIndexStats;
  /** Stops the subscription and frees the index; later calls reject with EBADF. */
  close(): void;
}

export interface ConntrackEventsOptions {
  /** SO_RCVBUF of the event socket (default 8 MiB; tests use tiny values to force overruns). */
  recvBufferBytes?: number;
  /** Most flows indexed (default 1,048,576). */
  maxFlows?: number;
  /** Resync by itself (in the background) after an overrun (default true). */
  autoResync?: boolean;
}

export interface ConntrackEventsApi {
  openConntrackEvents(options?: ConntrackEventsOptions): Promise<ConntrackEventIndex>;
}

/** The protocols IPVS services are keyed by (a subset of PROTOCOL_NUMBERS' names). */
export const IPVS_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const satisfies readonly ConntrackProtocol[];
export type IpvsProtocol = (typeof IPVS_PROTOCOLS)[number];

/** How IPVS identifies a virtual service: by address/port/protocol or by firewall mark. */
export type IpvsServiceKey =
  | { family: IpFamily; protocol: IpvsProtocol; address: string; port: number; fwmark?: undefined }
  | { family: IpFamily; fwmark: number; protocol?: undefined; address?: undefined; port?: undefined };

export interface IpvsService {
  key: IpvsServiceKey;
  scheduler: string;
  /** Raw `IP_VS_SVC_F_*` flags and their names (`persistent`, `hashed`, `sched-flag-1`, ...). */
  flags: number;
  flagNames: string[];
  /** Persistence timeout in seconds. */
  timeout: number;
  netmask: number;
}

export interface IpvsServiceSpec {
  key: IpvsServiceKey;
  scheduler: string;
  flags?: number;
  timeout?: number;
  netmask?: number;
}

export type IpvsForwarding = 'masq' | 'local' | 'tunnel' | 'route' | 'bypass';

/** Identifies a real server within a service. */
export interface IpvsDestinationKey {
  address: string;
  port: number;
  /** Family of the destination address (may differ from the service's for tunnels). */
  family?: IpFamily;
}

export interface IpvsDestination extends IpvsDestinationKey {
  family: IpFamily;
  forwarding: IpvsForwarding;
  weight: number;
  upperThreshold: number;
  lowerThreshold: number;
  /** Tunnel encapsulation (`ipip`, `gue`, `gre`) and its fields, for forwarding `tunnel`. */
  tunnelType: 'ipip' | 'gue' | 'gre';
  tunnelPort: number;
  tunnelFlags: number;
  activeConnections: number;
  inactiveConnections: number;
  persistentConnections: number;
}

export interface IpvsDestinationSpec extends IpvsDestinationKey {
  forwarding?: IpvsForwarding;
  weight: number;
  upperThreshold?: number;
  lowerThreshold?: number;
  tunnelType?: 'ipip' | 'gue' | 'gre';
  tunnelPort?: number;
  tunnelFlags?: number;
}

/** One edit of setDestinationWeights. */
export interface IpvsWeightEdit {
  service: IpvsServiceKey;
  destination: IpvsDestinationKey;
  weight: number;
}

export interface IpvsApi {
  /** Rejects with NetlinkError code `EIPVSUNAVAILABLE` when the IPVS genl family is absent. */
  listServices(): Promise<IpvsService[]>;
  listDestinations(service: IpvsServiceKey): Promise<IpvsDestination[]>;
  /** Read-modify-write: keeps forwarding method, thresholds and tunnel fields. */
  setDestinationWeight(service: IpvsServiceKey, destination: IpvsDestinationKey, weight: number): Promise<void>;
  /**
   * setDestinationWeight for many servers in one call, in order (the addon: one worker round
   * trip for all). One result per edit: undefined when done, else the NetlinkError that edit
   * met (ESRCH, ENOENT...). Invalid arguments, or IPVS unavailable, reject the whole call.
   */
  setDestinationWeights(edits: readonly IpvsWeightEdit[]): Promise<Array<NetlinkError | undefined>>;
  addDestination(service: IpvsServiceKey, destination: IpvsDestinationSpec): Promise<void>;
  deleteDestination(service: IpvsServiceKey, destination: IpvsDestinationKey): Promise<void>;
  addService(spec: IpvsServiceSpec): Promise<void>;
  deleteService(service: IpvsServiceKey): Promise<void>;
}

export interface NetlinkApi extends ConntrackApi, ConntrackEventsApi, IpvsApi {
  /** Releases the sockets; later calls reject. */
  close(): void;
}

export interface OpenOptions {
  /** Name of a network namespace under /var/run/netns; the current namespace when absent. */
  netns?: string;
}

/** Every failure of the addon or its stand-in. `code` is the errno name, or an `E...` of ours. */
export class NetlinkError extends Error {
  readonly op: string;
  readonly errno: number;
  readonly code: string;

  constructor(op: string, errno: number, code: string, message: string) {
    super(`${op}: ${message}`);
    this.name = 'NetlinkError';
    this.op = op;
    this.errno = errno;
    this.code = code;
  }
}
