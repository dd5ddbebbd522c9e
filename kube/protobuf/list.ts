/**
 * A streaming decoder of a list as a Kubernetes API server sends it to a client that asks for
 * protobuf (`Content-Type: application/vnd.kubernetes.protobuf`): `k8s\0`, then a
 * runtime.Unknown {typeMeta 1 {apiVersion 1, kind 2}, raw 2, contentEncoding 3, contentType 4}
 * whose raw is the list message {metadata 1 (ListMeta: resourceVersion 2, continue 3), items 2}
 * (apimachinery runtime/serializer/protobuf, meta/v1 generated.proto). Fed the body chunk by
 * chunk, it hands out each item as soon as its last byte arrived, so the peak is one chunk plus
 * one item, as the JSON list decoder (list-decoder.ts).
 *
 * Items are EndpointSlices with their endpoints left encoded and digested
 * (lazy-endpointslice.ts), as the protobuf watch hands them out: the index keeps those digests
 * from the list on, so a slice's first watch event decodes only the endpoints that changed.
 *
 * Bounded: an item over `maxItemBytes`, a list of another kind, an encoded (compressed) raw, a
 * field running past its message or a body that ends early is an error (a ProtobufError for
 * what the encoding says, so the caller can ask again as JSON).
 */
import type { ListMetadata } from '../list-decoder.js';
import { readLazyEndpointSlice, type LazyEndpointSlice } from './lazy-endpointslice.js';
import { ProtoReader, ProtobufError, WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from './wire.js';

const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;
/** The list kind decoded here and the item decoder for it. */
const LIST_KIND = 'EndpointSliceList';
/** A field's tag and length are two varints of at most 10 bytes. */
const MAX_HEADER = 20;
/** The small fields read whole: TypeMeta, ListMeta, contentEncoding. */
const MAX_SMALL_FIELD = 64 * 1024;

/** What a length-delimited field being gathered is. */
type Body = 'typeMeta' | 'encoding' | 'listMeta' | 'item';

interface Header {
  field: number;
  wire: number;
  /** The length of a length-delimited field (else 0). */
  length: number;
  /** Where the field's body starts. */
  next: number;
}

/** Reads one field's tag (and length, or skips a varint value) at `at`; undefined when the bytes end first. */
function readHeader(buf: Buffer, at: number): Header | undefined {
  let i = at;
  const varint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (let k = 0; k < 10; k++) {
      if (i >= buf.length) return undefined;
      const b = buf[i++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new ProtobufError('protobuf list: varint longer than 10 bytes');
  };
  const tag = varint();
  if (tag === undefined) return undefined;
  const field = Math.floor(tag / 8);
  const wire = tag % 8;
  if (field === 0) throw new ProtobufError('protobuf list: field number 0');
  if (wire === WIRE_LEN) {
    const length = varint();
    return length === undefined ? undefined : { field, wire, length, next: i };
  }
  if (wire === WIRE_VARINT) return varint() === undefined ? undefined : { field, wire, length: 0, next: i };
  if (wire === WIRE_FIXED64 || wire === WIRE_FIXED32) return { field, wire, length: 0, next: i };
  throw new ProtobufError(`protobuf list: wire type ${wire} not read here (field ${field})`);
}

export class ProtobufListDecoder {
  private sawMagic = false;
  private sawKind = false;
  private sawList = false;
  /** Inside the list message (Unknown's raw), with this many of its bytes still to read. */
  private inList = false;
  private listLeft = 0;
  /** Bytes of a field's tag and length split by a chunk's end. */
  private carry: Buffer | undefined;
  private skipLeft = 0;
  private body: { what: Body; buf: Buffer; filled: number } | undefined;
  private metadataValue: ListMetadata = {};
  private bytes = 0;

  constructor(
    private readonly onItem: (item: LazyEndpointSlice) => void,
    private readonly maxItemBytes = 16 * 1024 * 1024,
  ) {}

  /** Bytes decoded so far. */
  get length(): number {
    return this.bytes;
  }

  write(chunk: Buffer): void {
    this.bytes += chunk.length;
    let data = chunk;
    if (this.carry !== undefined) {
      data = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    let i = 0;
    while (i < data.length) {
      if (this.body !== undefined) {
        const b = this.body;
        const n = Math.min(b.buf.length - b.filled, data.length - i);
        data.copy(b.buf, b.filled, i, i + n);
        b.filled += n;
        i += n;
        this.consumed(n);
        if (b.filled === b.buf.length) {
          this.body = undefined;
          this.finishBody(b.what, b.buf, 0, b.buf.length);
        }
        continue;
      }
      if (this.skipLeft > 0) {
        const n = Math.min(this.skipLeft, data.length - i);
        this.skipLeft -= n;
        i += n;
        this.consumed(n);
        continue;
      }
      if (!this.sawMagic) {
        if (data.length - i < MAGIC.length) {
          this.carry = Buffer.from(data.subarray(i));
          return;
        }
        if (MAGIC.some((m, k) => data[i + k] !== m)) throw new ProtobufError('protobuf list: no k8s\\0 prefix');
        this.sawMagic = true;
        i += MAGIC.length;
        continue;
      }
      const h = readHeader(data, i);
      if (h === undefined) {
        if (data.length - i > MAX_HEADER) throw new ProtobufError('protobuf list: a field header longer than 20 bytes');
        this.carry = Buffer.from(data.subarray(i));
        return;
      }
      // The level is the one the header was read at (reading it may end the list message).
      const inList = this.inList;
      this.consumed(h.next - i);
      i = h.next;
      i = this.startField(h, data, i, inList);
    }
  }

  /** The body ended: checks the list was whole; its metadata. */
  end(): ListMetadata {
    if (!this.sawMagic || !this.sawList || this.inList || this.body !== undefined || this.skipLeft > 0 || this.carry !== undefined) {
      throw new ProtobufError('protobuf list: the body ended inside the list');
    }
    return this.metadataValue;
  }

  /** Bytes read inside the list message count against its length. */
  private consumed(n: number): void {
    if (!this.inList) return;
    this.listLeft -= n;
    if (this.listLeft < 0) throw new ProtobufError('protobuf list: a field runs past the list message');
    if (this.listLeft === 0) this.inList = false;
  }

  /** Acts on a field whose header was read (its body starts at `i` in `data`); returns where reading goes on. */
  private startField(h: Header, data: Buffer, i: number, inList: boolean): number {
    if (h.wire !== WIRE_LEN) {
      this.skipLeft = h.wire === WIRE_FIXED64 ? 8 : h.wire === WIRE_FIXED32 ? 4 : 0;
      if (inList && this.skipLeft > this.listLeft) throw new ProtobufError('protobuf list: a field runs past the list message');
      return i;
    }
    if (inList && h.length > this.listLeft) throw new ProtobufError(`protobuf list: a field of ${h.length} bytes past the end of the list message`);
    const what = this.bodyOf(h.field, inList);
    if (what === 'list') {
      if (!this.sawKind) throw new ProtobufError('protobuf list: the list message comes before its kind');
      if (this.sawList) throw new ProtobufError('protobuf list: two list messages');
      this.sawList = true;
      this.inList = h.length > 0;
      this.listLeft = h.length;
      return i;
    }
    if (what === undefined) {
      this.skipLeft = h.length;
      return i;
    }
    const max = what === 'item' ? this.maxItemBytes : MAX_SMALL_FIELD;
    if (h.length > max) throw new Error(`list response: one ${what === 'item' ? 'item' : 'field'} is larger than ${max} bytes`);
    if (data.length - i >= h.length) {
      // Whole in this chunk: read in place.
      this.consumed(h.length);
      this.finishBody(what, data, i, i + h.length);
      return i + h.length;
    }
    this.body = { what, buf: Buffer.allocUnsafe(h.length), filled: 0 };
    return i;
  }

  /** What a length-delimited field is, by level and number: undefined to skip. */
  private bodyOf(field: number, inList: boolean): Body | 'list' | undefined {
    if (inList) return field === 1 ? 'listMeta' : field === 2 ? 'item' : undefined;
    if (field === 1) return 'typeMeta';
    if (field === 2) return 'list';
    if (field === 3) return 'encoding';
    return undefined;
  }

  private finishBody(what: Body, buf: Buffer, start: number, end: number): void {
    switch (what) {
      case 'item':
        this.onItem(readLazyEndpointSlice(buf, start, end));
        return;
      case 'typeMeta': {
        const r = new ProtoReader(buf, start, end);
        let kind = '';
        while (r.next()) {
          if (r.field === 2) kind = r.string();
          else r.skip();
        }
        if (kind !== LIST_KIND) throw new ProtobufError(`protobuf list: kind ${kind.slice(0, 60) || '(none)'} is not decoded here`);
        this.sawKind = true;
        return;
      }
      case 'encoding': {
        const encoding = buf.toString('utf8', start, end);
        if (encoding !== '') throw new ProtobufError(`protobuf list: content encoding ${encoding.slice(0, 40)}`);
        return;
      }
      case 'listMeta': {
        const r = new ProtoReader(buf, start, end);
        const m: ListMetadata = {};
        while (r.next()) {
          if (r.field === 2) m.resourceVersion = r.string();
          else if (r.field === 3) {
            const token = r.string();
            if (token !== '') m.continue = token;
          } else r.skip();
        }
        this.metadataValue = m;
        return;
      }
    }
  }
}
