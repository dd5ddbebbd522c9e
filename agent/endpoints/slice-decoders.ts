/**
 * The decoders of the endpoints runnable's slice list/watch. Once the first sync is in
 * (`split()`), each slice is decoded into its view against the endpoints the index keeps
 * (`keptOf`, src/endpoints/slice-bytes.ts): only the endpoints whose bytes the index does not
 * already keep are parsed. The first sync parses each slice whole: the index keeps nothing to compare with
 * yet, and one JSON.parse of a slice costs less than the split and a parse per endpoint.
 */
import type { WatchDecoders } from '../../kube/json-decoder.js';
import { decodeSliceDocument, type KeptEndpointsOf } from '../../src/endpoints/slice-bytes.js';

export function sliceDecoders(split: () => boolean, keptOf: KeptEndpointsOf): WatchDecoders {
  const whole = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')) as unknown;
  return {
    item: { decode: (bytes) => (split() ? decodeSliceDocument(bytes, 1, keptOf) : whole(bytes)) },
    event: { decode: (line) => (split() ? decodeSliceDocument(line, 2, keptOf) : whole(line)) },
  };
}
