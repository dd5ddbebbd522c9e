/**
 * The slice watch's EndpointSlices with their endpoints left encoded until read: a readiness
 * flip rewrites a whole slice and changes one endpoint's bytes, so the agent compares each
 * endpoint's digest with the one it kept (src/endpoints/slice-view.ts) and decodes only those
 * that differ.
 */
import { dataViewOf, digestInto } from './digest.js';
import { readEndpointMessage, readPort, type EndpointJson, type EndpointSliceJson } from './endpointslice.js';
import { readObjectMeta, type ObjectMetaJson } from './meta.js';
import { ProtoReader } from './wire.js';

/**
 * A slice's endpoints still encoded: each one's bytes (copied out of the frame, which the watch
 * reuses), a 64-bit digest of them (digest.ts; `digests[2i]`, `digests[2i + 1]`), and its
 * decode on demand. A readiness flip rewrites a whole slice and changes one endpoint's bytes:
 * the agent compares digests with the ones it kept and decodes only the endpoints that differ.
 */
export class EncodedEndpoints {
  constructor(
    private readonly bytes: Buffer,
    /** Endpoint i is bytes[spans[2i], spans[2i + 1]). */
    private readonly spans: Int32Array,
    readonly digests: Uint32Array,
  ) {}

  get size(): number {
    return this.spans.length / 2;
  }

  decode(i: number): EndpointJson {
    return readEndpointMessage(new ProtoReader(this.bytes, this.spans[2 * i], this.spans[2 * i + 1]));
  }
}

/**
 * An EndpointSlice whose endpoints stay encoded (`encoded`) until something reads `endpoints`
 * (then all are decoded, once): the slice watch's objects. Serializes as the JSON API shows it.
 */
export class LazyEndpointSlice {
  readonly kind = 'EndpointSlice';
  readonly apiVersion = 'discovery.k8s.io/v1';
  private decoded: EndpointJson[] | undefined;

  constructor(
    readonly metadata: ObjectMetaJson,
    readonly addressType: string | undefined,
    readonly ports: Array<{ name?: string; protocol?: string; port?: number }> | undefined,
    readonly encoded: EncodedEndpoints,
  ) {}

  get endpoints(): EndpointJson[] | undefined {
    if (this.encoded.size === 0) return undefined;
    if (this.decoded === undefined) {
      const all: EndpointJson[] = [];
      for (let i = 0; i < this.encoded.size; i++) all.push(this.encoded.decode(i));
      this.decoded = all;
    }
    return this.decoded;
  }

  toJSON(): EndpointSliceJson {
    const endpoints = this.endpoints;
    return {
      kind: this.kind, apiVersion: this.apiVersion, metadata: this.metadata,
      ...(this.addressType === undefined ? {} : { addressType: this.addressType }),
      ...(this.ports === undefined ? {} : { ports: this.ports }),
      ...(endpoints === undefined ? {} : { endpoints }),
    };
  }
}

/** Endpoint ranges of the slice being read (pairs), reused from slice to slice: the reader runs for every watch event. */
let rangeScratch = new Int32Array(512);

/** `readEndpointSlice`, the endpoints left encoded (see LazyEndpointSlice). */
export function readLazyEndpointSlice(buf: Buffer, start: number, end: number): LazyEndpointSlice {
  const r = new ProtoReader(buf, start, end);
  let metadata: ObjectMetaJson = {};
  let ports: Array<{ name?: string; protocol?: string; port?: number }> | undefined;
  let addressType: string | undefined;
  let count = 0;
  while (r.next()) {
    switch (r.field) {
      case 1: metadata = readObjectMeta(r); break;
      case 2: {
        const from = r.takeSpan();
        if (count + 2 > rangeScratch.length) {
          const grown = new Int32Array(2 * rangeScratch.length);
          grown.set(rangeScratch);
          rangeScratch = grown;
        }
        rangeScratch[count] = from;
        rangeScratch[count + 1] = r.spanEnd;
        count += 2;
        break;
      }
      case 3: (ports ??= []).push(readPort(r)); break;
      case 4: addressType = r.string(); break;
      default: r.skip();
    }
  }
  // The endpoints' bytes, copied: the frame is the watch's buffer, valid only while it is handed on.
  // The reader moves forward: the first endpoint starts first, the last ends last.
  const first = count === 0 ? start : (rangeScratch[0] as number);
  const last = count === 0 ? start : (rangeScratch[count - 1] as number);
  const bytes = Buffer.allocUnsafe(last - first);
  buf.copy(bytes, 0, first, last);
  const local = new Int32Array(count);
  const digests = new Uint32Array(count);
  const view = dataViewOf(bytes);
  for (let k = 0; k < count; k += 2) {
    const from = (rangeScratch[k] as number) - first;
    const to = (rangeScratch[k + 1] as number) - first;
    local[k] = from;
    local[k + 1] = to;
    digestInto(view, from, to, digests, k);
  }
  return new LazyEndpointSlice(metadata, addressType, ports, new EncodedEndpoints(bytes, local, digests));
}
