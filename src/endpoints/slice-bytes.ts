/**
 * An EndpointSlice decoded from its bytes as the agent reads it: the slice's own fields
 * (metadata, ports, addressType) are parsed, and its view (slice-view.ts) is built at once,
 * while the bytes are there, against the endpoints the index keeps under the slice's key: an
 * endpoint whose bytes have the digest of a kept one is that one and is not parsed. The API
 * server writes an unchanged endpoint with the same bytes, so when a readiness flip rewrites a
 * slice of 100 endpoints, one is parsed. Nothing of the bytes is kept (the caller's buffer, a
 * watch line, is reused for the next line).
 *
 * The view is valid until the index next changes (the list/watch applies each object in the
 * call that decoded it); the index refuses one built against another state. The decoded
 * slice's `endpoints` cannot be read (its view is what the agent reads): reading them throws.
 */
import { splitArray } from '../json-array-split.js';
import { buildView, SLICE_VIEW, type KeptEndpoints, type RawSlice } from './slice-view.js';

const ENDPOINTS_KEY = new TextEncoder().encode('endpoints');
const utf8 = new TextDecoder();

/** The endpoints the index keeps under a slice's key (`namespace/name`), if any. */
export type KeptEndpointsOf = (key: string) => KeptEndpoints | undefined;

/**
 * One EndpointSlice document: a listed item (`depth` 1) or a watch event line
 * (`{"type":..,"object":{..}}`, `depth` 2, whose `object` gets the view). Anything the split
 * does not take (an ERROR event, unusual JSON) is parsed whole, as JSON.parse does. Throws on
 * malformed JSON.
 */
export function decodeSliceDocument(bytes: Uint8Array, depth: 1 | 2, keptOf?: KeptEndpointsOf): unknown {
  const split = splitArray(bytes, ENDPOINTS_KEY, depth);
  if (split === undefined) return JSON.parse(utf8.decode(bytes)) as unknown;
  const head = JSON.parse(utf8.decode(bytes.subarray(0, split.open + 1)) + utf8.decode(bytes.subarray(split.close - 1))) as unknown;
  const object = (depth === 2 ? (head as { object?: unknown } | null)?.object : head) as Record<string, unknown> | null | undefined;
  if (object === null || typeof object !== 'object' || !Array.isArray(object.endpoints) || object.endpoints.length !== 0) {
    return JSON.parse(utf8.decode(bytes)) as unknown;
  }
  const raw = object as RawSlice;
  const { spans } = split;
  const source = { size: split.count, digests: split.digests, parse: (i: number): unknown => JSON.parse(utf8.decode(bytes.subarray(spans[2 * i], spans[2 * i + 1]))) as unknown };
  const view = buildView(raw, source, keptOf?.(`${raw.metadata?.namespace ?? ''}/${raw.metadata?.name ?? ''}`));
  Object.defineProperty(object, SLICE_VIEW, { value: view, enumerable: false });
  Object.defineProperty(object, 'endpoints', {
    enumerable: false,
    configurable: true,
    get: () => {
      throw new Error(`EndpointSlice ${view.key}: decoded to its view (viewSlice); its endpoints are not kept`);
    },
  });
  return head;
}
