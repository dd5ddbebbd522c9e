/**
 * netlink-native: conntrack (ctnetlink) and IPVS (generic netlink) from Node, in C over N-API.
 * `openNetlink()` opens the sockets (in a named network namespace when asked) and returns a
 * typed NetlinkApi. Arguments are checked here before the C code sees them; every failure is a
 * NetlinkError {op, errno, code, message}. Each call runs on a worker thread; calls on one
 * handle run one after the other.
 */
import { loadAddon, toNetlinkError, type RawAddon, type RawHandle, type RawOpenOptions } from './addon.js';
import { toDeleteResult, toRawFilter, type RawDeleteResult, type RawListResult } from './conntrack-convert.js';
import { diagnosticsOf, registerInternals, type RawDeleteEntriesResult } from './native-internals.js';
import { checkEventsOptions } from './conntrack-events-common.js';
import { NativeConntrackEvents } from './conntrack-events-native.js';
import { checkEntryRefs } from './conntrack-entry-refs.js';
import { protocolName } from './conntrack-names.js';
import { checkScanOptions } from './conntrack-scan.js';
import { ScanBatchReceiver } from './conntrack-scan-stream.js';
import { decodeEntryRecords } from './conntrack-records.js';
import { checkDeleteOptions, checkListOptions } from './conntrack-validate.js';
import { NativeIpvs } from './ipvs-native.js';
import type {
  ConntrackEntry,
  ConntrackEventIndex,
  ConntrackEventsOptions,
  ConntrackEntryRef,
  ConntrackStats,
  DeleteConntrackEntriesResult,
  DeleteCountsByProtocol,
  DeleteConntrackOptions,
  DeleteConntrackResult,
  IpvsDestination,
  IpvsDestinationKey,
  IpvsDestinationSpec,
  IpvsService,
  IpvsServiceKey,
  IpvsServiceSpec,
  IpvsWeightEdit,
  ListConntrackOptions,
  ScanDnatOptions,
  ScanDnatResult,
  NetlinkApi,
  NetlinkError,
  OpenOptions,
} from './types.js';
import { IPS_DST_NAT } from './types.js';

export * from './types.js';
export type { ConntrackFillSpec, ConntrackFillResult, RawDeleteResult, RawListResult } from './conntrack-convert.js';
export type { RawDeleteEntriesResult } from './native-internals.js';

/** What ct_scan answers. */
export interface RawScanResult extends RawListResult {
  statusSkipped: number;
  owned: number;
  /** The final dump pass's number, and how many onBatch calls it made. */
  pass: number;
  batches: number;
}

export type NativeOpenOptions = OpenOptions & Omit<RawOpenOptions, 'netns'>;

export class NativeNetlink implements NetlinkApi {
  private constructor(
    private readonly addon: RawAddon,
    private readonly handle: RawHandle,
    private readonly netns: string | undefined,
  ) {
    registerInternals(this, { invoke: (op, native, args) => this.invoke(op, native, args), diagnostics: {} });
  }

  static open(options: NativeOpenOptions = {}): NativeNetlink {
    const addon = loadAddon();
    try {
      return new NativeNetlink(addon, addon.open(options), options.netns);
    } catch (error) {
      throw toNetlinkError('open', error);
    }
  }

  private async invoke<T>(op: string, native: string, args: object): Promise<T> {
    try {
      return (await this.addon.call(this.handle, native, args)) as T;
    } catch (error) {
      throw toNetlinkError(op, error);
    }
  }

  async deleteConntrack(options: DeleteConntrackOptions): Promise<DeleteConntrackResult> {
    const checked = checkDeleteOptions('deleteConntrack', options);
    const raw = await this.invoke<RawDeleteResult>('deleteConntrack', 'ct_delete', { ...toRawFilter(checked), dryRun: checked.dryRun });
    diagnosticsOf(this).lastDelete = raw;
    return toDeleteResult(raw);
  }

  async deleteConntrackEntries(entries: readonly ConntrackEntryRef[]): Promise<DeleteConntrackEntriesResult> {
    const checked = checkEntryRefs('deleteConntrackEntries', entries);
    if (checked.length === 0) return { deleted: 0, alreadyGone: 0, failed: 0, byProtocol: {}, ms: 0 };
    const raw = await this.invoke<RawDeleteEntriesResult>('deleteConntrackEntries', 'ct_delete_tuples', { entries: checked });
    diagnosticsOf(this).lastDeleteEntries = raw;
    const byProtocol: Record<string, DeleteCountsByProtocol> = {};
    for (const [n, counts] of Object.entries(raw.byProtocol)) byProtocol[protocolName(Number(n))] = counts;
    return { deleted: raw.deleted, alreadyGone: raw.alreadyGone, failed: raw.failed, byProtocol, ms: raw.ms };
  }

  async listConntrack(options?: ListConntrackOptions): Promise<ConntrackEntry[]> {
    const checked = checkListOptions('listConntrack', options);
    const args = { ...toRawFilter(checked), ...(checked.limit !== undefined ? { limit: checked.limit } : {}) };
    const raw = await this.invoke<RawListResult>('listConntrack', 'ct_list', args);
    return decodeEntryRecords(raw.records);
  }

  async scanDnatEntries(options: ScanDnatOptions): Promise<ScanDnatResult> {
    const checked = checkScanOptions('scanDnatEntries', options);
    const receiver = options.onEntries === undefined ? undefined : new ScanBatchReceiver(options.onEntries);
    const raw = await this.invoke<RawScanResult>('scanDnatEntries', 'ct_scan', { ...checked, statusAny: IPS_DST_NAT, ...(receiver === undefined ? {} : { onBatch: receiver.onBatch }) });
    const counts = { scanned: raw.scanned, notNat: raw.statusSkipped, owned: raw.owned, pass: raw.pass, ms: raw.ms, userMs: raw.userMs, sysMs: raw.sysMs };
    if (receiver === undefined) return { entries: decodeEntryRecords(raw.records), ...counts };
    await receiver.finish(raw.pass, raw.batches, raw.records);
    return { entries: [], ...counts };
  }

  async conntrackStats(): Promise<ConntrackStats> {
    return this.invoke<ConntrackStats>('conntrackStats', 'ct_stats', {});
  }

  /** A conntrack event subscription and flow index of its own (own sockets, own reader thread),
   * in this handle's network namespace. See ConntrackEventIndex. */
  async openConntrackEvents(options?: ConntrackEventsOptions): Promise<ConntrackEventIndex> {
    return NativeConntrackEvents.open(this.addon, this.netns, checkEventsOptions(options));
  }

  // IPVS: each method delegates to an `ipvs_*` op of the addon through NativeIpvs
  // (ipvs-native.ts: argument checks, conversions, error wording shared with the stand-in).
  private readonly ipvs = new NativeIpvs((op, native, args) => this.invoke(op, native, args));

  listServices(): Promise<IpvsService[]> {
    return this.ipvs.listServices();
  }

  listDestinations(service: IpvsServiceKey): Promise<IpvsDestination[]> {
    return this.ipvs.listDestinations(service);
  }

  setDestinationWeight(service: IpvsServiceKey, destination: IpvsDestinationKey, weight: number): Promise<void> {
    return this.ipvs.setDestinationWeight(service, destination, weight);
  }

  setDestinationWeights(edits: readonly IpvsWeightEdit[]): Promise<Array<NetlinkError | undefined>> {
    return this.ipvs.setDestinationWeights(edits);
  }

  addDestination(service: IpvsServiceKey, destination: IpvsDestinationSpec): Promise<void> {
    return this.ipvs.addDestination(service, destination);
  }

  deleteDestination(service: IpvsServiceKey, destination: IpvsDestinationKey): Promise<void> {
    return this.ipvs.deleteDestination(service, destination);
  }

  addService(spec: IpvsServiceSpec): Promise<void> {
    return this.ipvs.addService(spec);
  }

  deleteService(service: IpvsServiceKey): Promise<void> {
    return this.ipvs.deleteService(service);
  }

  close(): void {
    this.addon.close(this.handle);
  }
}

/** Opens the netlink sockets (inside `/var/run/netns/<netns>` when given). */
export function openNetlink(options: NativeOpenOptions = {}): NativeNetlink {
  return NativeNetlink.open(options);
}

/** IPVS key text forms and checks (pure; no addon needed). */
export { canonicalAddress, formatDestinationKey, formatServiceKey, ipvsFlagNames, parseDestinationKey, parseServiceKey, sameDestinationKey, sameServiceKey } from './ipvs-keys.js';

/**
 * A listening TCP socket on `host` (numeric IPv4 or IPv6) and `port` with SO_REUSEPORT, for
 * `server.listen({ fd })`: a second process that binds the same address and port the same way
 * joins the group and the kernel spreads new connections over both (the agent's zero-gap
 * handover; Node 20 has no `reusePort` listen option). Synchronous. NetlinkError on failure
 * (op `listenReusePort`, e.g. EADDRINUSE when a socket without SO_REUSEPORT holds the port).
 */
export function listenReusePort(host: string, port: number, backlog = 511): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw toNetlinkError('listenReusePort', { errno: 22, code: 'EINVAL', message: `port must be an integer in [0, 65535], not ${String(port)}` });
  const addon = loadAddon();
  try {
    return addon.listenReusePort(host, port, backlog);
  } catch (error) {
    throw toNetlinkError('listenReusePort', error);
  }
}
