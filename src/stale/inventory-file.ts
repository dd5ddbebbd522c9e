import { parseAllDocuments } from 'yaml';
import { fail, ok, type Result } from '../result.js';
import type { EndpointSliceLike } from './endpoint-slice.js';
import type { PodLike } from './pod-ips.js';

/** What an offline endpoints file gives: EndpointSlices and, optionally, the live Pods. */
export interface Inventory {
  slices: EndpointSliceLike[];
  pods: PodLike[];
}

/**
 * Parses an endpoints file: JSON or YAML, one object, a `kind: List`/`EndpointSliceList`,
 * a JSON array, or several YAML documents (what `kubectl get endpointslices,pods -A -o yaml`
 * writes). EndpointSlices and Pods are kept; other kinds are ignored. Problems name the
 * document; a file with problems yields nothing (a partial endpoint set would call live
 * entries stale).
 */
export function parseInventory(text: string): Result<Inventory, string[]> {
  const problems: string[] = [];
  const items: unknown[] = [];
  const docs = parseAllDocuments(text);
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      problems.push(`document ${i + 1}: ${doc.errors.map((e) => e.message).join('; ')}`);
      continue;
    }
    flatten(doc.toJS() as unknown, items);
  }
  const inventory: Inventory = { slices: [], pods: [] };
  for (const [i, item] of items.entries()) {
    if (typeof item !== 'object' || item === null) continue;
    const kind = (item as { kind?: unknown }).kind;
    if (kind === 'EndpointSlice') {
      const slice = item as EndpointSliceLike & { endpoints?: unknown };
      if (slice.endpoints !== undefined && slice.endpoints !== null && !Array.isArray(slice.endpoints)) {
        problems.push(`item ${i + 1} (EndpointSlice ${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}): endpoints is not a list`);
        continue;
      }
      inventory.slices.push(slice);
    } else if (kind === 'Pod') {
      inventory.pods.push(item);
    }
  }
  if (problems.length > 0) return fail(problems);
  return ok(inventory);
}

function flatten(value: unknown, out: unknown[]): void {
  if (Array.isArray(value)) {
    for (const v of value) flatten(v, out);
  } else if (typeof value === 'object' && value !== null && Array.isArray((value as { items?: unknown }).items)) {
    const list = value as { kind?: string; items: unknown[] };
    const itemKind = list.kind?.endsWith('List') === true && list.kind !== 'List' ? list.kind.slice(0, -4) : undefined;
    for (const item of list.items) {
      if (itemKind !== undefined && typeof item === 'object' && item !== null && (item as { kind?: unknown }).kind === undefined) {
        out.push({ ...item, kind: itemKind });
      } else {
        out.push(item);
      }
    }
  } else if (value !== null && value !== undefined) {
    out.push(value);
  }
}
