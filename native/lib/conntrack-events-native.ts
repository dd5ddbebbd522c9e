/**
 * The event index on the real kernel (ConntrackEventIndex over the addon's `ev_*` ops; C in
 * native/src/ops/ct_events.c and native/src/napi/ct_events_napi.c). It owns a handle of its
 * own, so its calls never queue behind the agent's dumps, and its reader thread runs in C:
 * nothing here blocks the event loop.
 */
import { toNetlinkError, type RawAddon, type RawHandle } from './addon.js';
import { toIndexDeleteResult, toVerifyResult, type RawDeleteResult } from './conntrack-convert.js';
import { decodeEntryRecords } from './conntrack-records.js';
import { checkAddresses, type CheckedEventsOptions } from './conntrack-events-common.js';
import type {
  ConntrackDeleteIndexedResult,
  ConntrackEventIndex,
  ConntrackIndexFlows,
  ConntrackIndexStats,
  ConntrackVerifyResult,
} from './types.js';

/** What the addon's synchronous `evStats(handle)` returns. */
export interface RawIndexStats extends Omit<ConntrackIndexStats, 'filter' | 'stale'> {
  stale: boolean;
  filterBpf: boolean;
  /** Per-address sync in progress or failed (the set is fresh only once its dump pass finished). */
  syncing: number;
}

interface RawFlows { fresh: boolean; records: ArrayBuffer; refreshed: number }

export class NativeConntrackEvents implements ConntrackEventIndex {
  private closed = false;
  private resyncing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly addon: RawAddon & { evStats?: (h: RawHandle) => RawIndexStats },
    private readonly handle: RawHandle,
    options: CheckedEventsOptions,
  ) {
    // After an overrun the index stays stale until one dump pass: start it by ourselves.
    if (options.autoResync) {
      this.timer = setInterval(() => this.maybeResync(), 250);
      this.timer.unref();
    }
  }

  /** Opens the event socket (in `netns` when given), subscribes and starts the reader thread. */
  static async open(addon: RawAddon, netns: string | undefined, options: CheckedEventsOptions): Promise<NativeConntrackEvents> {
    let handle: RawHandle;
    try {
      handle = addon.open(netns !== undefined ? { netns } : {});
    } catch (error) {
      throw toNetlinkError('openConntrackEvents', error);
    }
    try {
      await addon.call(handle, 'ev_open', { ...(netns !== undefined ? { netns } : {}), recvBufferBytes: options.recvBufferBytes, maxFlows: options.maxFlows });
    } catch (error) {
      addon.close(handle);
      throw toNetlinkError('openConntrackEvents', error);
    }
    return new NativeConntrackEvents(addon, handle, options);
  }

  private async invoke<T>(op: string, native: string, args: object): Promise<T> {
    try {
      return (await this.addon.call(this.handle, native, args)) as T;
    } catch (error) {
      throw toNetlinkError(op, error);
    }
  }

  private maybeResync(): void {
    if (this.closed || this.resyncing !== undefined || !this.stats().stale) return;
    this.resyncing = this.resync()
      .catch(() => undefined)
      .finally(() => (this.resyncing = undefined));
  }

  async setWatchedAddresses(addresses: string[]): Promise<void> {
    const checked = checkAddresses('setWatchedAddresses', addresses);
    await this.invoke('setWatchedAddresses', 'ev_watch', { addresses: checked });
  }

  async flowsOf(addresses: string[]): Promise<ConntrackIndexFlows> {
    const checked = checkAddresses('flowsOf', addresses);
    const raw = await this.invoke<RawFlows>('flowsOf', 'ev_flows', { addresses: checked });
    return { fresh: raw.fresh, flows: decodeEntryRecords(raw.records), refreshed: raw.refreshed };
  }

  async deleteFlowsOf(addresses: string[]): Promise<ConntrackDeleteIndexedResult> {
    const checked = checkAddresses('deleteFlowsOf', addresses);
    return toIndexDeleteResult(await this.invoke<RawDeleteResult & { fresh: boolean }>('deleteFlowsOf', 'ev_delete', { addresses: checked }));
  }

  async verify(addresses: string[]): Promise<ConntrackVerifyResult> {
    const checked = checkAddresses('verify', addresses);
    if (checked.length === 0) return { deleted: 0, alreadyGone: 0, failed: 0, scanned: 0, ms: 0 };
    return toVerifyResult(await this.invoke<RawDeleteResult>('verify', 'ev_verify', { addresses: checked }));
  }

  async resync(): Promise<void> {
    await this.invoke('resync', 'ev_resync', {});
  }

  stats(): ConntrackIndexStats {
    const raw = this.closed || this.addon.evStats === undefined ? undefined : this.addon.evStats(this.handle);
    if (raw === undefined) {
      return { watchedAddresses: 0, flows: 0, events: 0, eventsFilteredOut: 0, overruns: 0, resyncs: 0, stale: true, bytesPerFlow: 0, indexBytes: 0, maxFlows: 0, flowsDropped: 0, filter: 'userspace', filterInstructions: 0, deletedByIndex: 0, alreadyGone: 0, verifyPasses: 0, verifyDeleted: 0, gets: 0 };
    }
    const { filterBpf, syncing: _syncing, ...rest } = raw;
    return { ...rest, filter: filterBpf ? 'bpf' : 'userspace' };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.addon.close(this.handle);
  }
}
