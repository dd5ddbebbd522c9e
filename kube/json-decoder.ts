/**
 * How a list/watch turns the bytes of one listed item or one watch event line into the value
 * it hands on: JSON.parse by default, a field mask first (json-mask.ts), or a decoder that
 * knows the object (an EndpointSlice's endpoints left as bytes: src/endpoints/slice-bytes.ts).
 * Whatever it is, malformed JSON is an error, never a partial value.
 */
export interface JsonDecoder {
  decode(bytes: Buffer): unknown;
}

/** The decoders of one list/watch: for a listed item, and for a watch event line (`{"type":..,"object":..}`). */
export interface WatchDecoders {
  readonly item: JsonDecoder;
  readonly event: JsonDecoder;
}
