/**
 * `netlink-native/testing`: test and bench operations, kept off the production class.
 * - insertConntrackForTest: creates conntrack entries (batched IPCTNL_MSG_CT_NEW) in the
 *   handle's network namespace, or in an in-memory stand-in with the same semantics.
 * - dumpPassOnly / receivePassOnly: one dump pass parsed in C / only received (bench floors).
 * - listConntrackRaw: ct_list's raw answer (scanned count, buffer growths...).
 * - lastDelete / lastDeleteEntries: diagnostics of a handle's last deletes (sends, ACK
 *   overruns, resends, re-checks).
 */
import { toRawFillSpec, toRawFilter, type ConntrackFillResult, type ConntrackFillSpec, type RawDeleteResult, type RawListResult } from './conntrack-convert.js';
import { checkListOptions } from './conntrack-validate.js';
import type { NativeNetlink } from './index.js';
import { MemoryConntrack } from './memory-conntrack.js';
import { diagnosticsOf, invokeOf } from './native-internals.js';
import type { ListConntrackOptions } from './types.js';

export type { ConntrackFillSpec, ConntrackFillResult, RawDeleteResult, RawListResult };
export type { RawOpenOptions } from './addon.js';

export interface PassTiming {
  scanned: number;
  ms: number;
  userMs: number;
  sysMs: number;
}

/** Creates entries per spec (see ConntrackFillSpec) in the addon's namespace or in the stand-in. */
export function insertConntrackForTest(target: NativeNetlink | MemoryConntrack, specs: ConntrackFillSpec[]): Promise<ConntrackFillResult> {
  if (target instanceof MemoryConntrack) return target.insertConntrackForTest(specs);
  return invokeOf(target)<ConntrackFillResult>('insertConntrackForTest', 'ct_insert', { entries: specs.map(toRawFillSpec) });
}

/** One full dump pass parsed in C, nothing built in JavaScript (`ct_list` with limit 0). */
export async function dumpPassOnly(api: NativeNetlink): Promise<PassTiming> {
  const raw = await invokeOf(api)<RawListResult>('listConntrack', 'ct_list', { limit: 0 });
  return { scanned: raw.scanned, ms: raw.ms, userMs: raw.userMs, sysMs: raw.sysMs };
}

/** One full dump pass that only receives and counts the messages: the kernel's part, the floor of any pass. */
export async function receivePassOnly(api: NativeNetlink): Promise<PassTiming> {
  const raw = await invokeOf(api)<RawListResult>('listConntrack', 'ct_list', { limit: 0, parse: 0 });
  return { scanned: raw.scanned, ms: raw.ms, userMs: raw.userMs, sysMs: raw.sysMs };
}

/** The raw list result (scanned count, buffer growths...). */
export function listConntrackRaw(api: NativeNetlink, options?: ListConntrackOptions): Promise<RawListResult> {
  const checked = checkListOptions('listConntrack', options);
  return invokeOf(api)<RawListResult>('listConntrack', 'ct_list', { ...toRawFilter(checked), ...(checked.limit !== undefined ? { limit: checked.limit } : {}) });
}

/** Diagnostics of the handle's last deleteConntrack (batches, ACK overruns, resends...). */
export function lastDelete(api: NativeNetlink): RawDeleteResult | undefined {
  return diagnosticsOf(api).lastDelete;
}

/** Diagnostics of the handle's last deleteConntrackEntries (sends, re-checks, first errno...). */
export function lastDeleteEntries(api: NativeNetlink): RawDeleteResult | undefined {
  return diagnosticsOf(api).lastDeleteEntries;
}
