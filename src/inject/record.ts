import { HOOK_KINDS, type HookKind } from '../contract.js';
import { isObject } from './json.js';

/**
 * The `conndrain.io/injected` annotation: what the webhook did, as compact JSON, for humans
 * (`kubectl get pod -o yaml`) and for reinvocation (a second pass recognises its own hooks).
 * Example: {"hook":"sleep","containers":["app"],"drainSeconds":30,"terminationGracePeriodSeconds":40}
 */
export interface InjectedRecord {
  hook: HookKind;
  containers: string[];
  drainSeconds: number;
  terminationGracePeriodSeconds: number;
}

export function formatInjectedRecord(record: InjectedRecord): string {
  // Fixed key order: the same injection always writes the same bytes.
  return JSON.stringify({
    hook: record.hook,
    containers: record.containers,
    drainSeconds: record.drainSeconds,
    terminationGracePeriodSeconds: record.terminationGracePeriodSeconds,
  });
}

/** Reads a record; undefined when absent or not one of ours (never throws). */
export function parseInjectedRecord(text: string | undefined): InjectedRecord | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const hook = HOOK_KINDS.find((k) => k === value['hook']);
  const containers = value['containers'];
  const drain = value['drainSeconds'];
  const grace = value['terminationGracePeriodSeconds'];
  if (hook === undefined || !Array.isArray(containers) || !containers.every((c) => typeof c === 'string')) return undefined;
  if (typeof drain !== 'number' || typeof grace !== 'number') return undefined;
  return { hook, containers, drainSeconds: drain, terminationGracePeriodSeconds: grace };
}
