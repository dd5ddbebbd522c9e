/**
 * What `netlink-native/testing` reaches inside a NativeNetlink without the production class
 * carrying test or bench operations: its addon call, and the diagnostics of its last deletes.
 * Internal to the package (not in `exports`).
 */
import type { RawDeleteResult } from './conntrack-convert.js';

export interface DeleteDiagnostics {
  lastDelete?: RawDeleteResult;
  lastDeleteEntries?: RawDeleteResult;
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
