/**
 * What `netlink-native/testing` reaches inside a NativeNetlink without the production class
 * carrying test or bench operations: its addon call, and the diagnostics of its last deletes.
 * Internal to the package (not in `exports`).
 */
import type { RawDeleteResult } from './conntrack-convert.js';
import type { DeleteCountsByProtocol } from './types.js';

/** What ct_delete_tuples answers: the public counts (byProtocol keyed by number) plus diagnostics. */
export interface RawDeleteEntriesResult {
  deleted: number;
  alreadyGone: number;
  failed: number;
  firstErrno: number;
  byProtocol: Record<string, DeleteCountsByProtocol>;
  /** ENOENT answers re-checked by GET, and how many of those entries were still present. */
  rechecked: number;
  stillPresent: number;
  sends: number;
  ackOverruns: number;
  resent: number;
  ms: number;
}

export interface DeleteDiagnostics {
  lastDelete?: RawDeleteResult;
  lastDeleteEntries?: RawDeleteEntriesResult;
}

export type Invoke = <T>(op: string, native: string, args: object) => Promise<T>;

interface Internals {
  invoke: Invoke;
  diagnostics: DeleteDiagnostics;
}

const internals = new WeakMap<object, Internals>();

export function registerInternals(owner: object, value: Internals): void {
  internals.set(owner, value);
}

function internalsOf(owner: object): Internals {
  const found = internals.get(owner);
  if (found === undefined) throw new TypeError('not a NativeNetlink handle of this netlink-native');
  return found;
}

export function diagnosticsOf(owner: object): DeleteDiagnostics {
  return internalsOf(owner).diagnostics;
}

export function invokeOf(owner: object): Invoke {
  return internalsOf(owner).invoke;
}
