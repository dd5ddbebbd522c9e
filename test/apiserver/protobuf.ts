/**
 * A minimal protobuf encoder for what a kube-apiserver sends a client that asks for
 * `application/vnd.kubernetes.protobuf`: EndpointSlices (discovery.k8s.io/v1) and Status
 * objects, wrapped as the protobuf Serializer writes an object (`envelope`: `k8s\0` then a
 * runtime.Unknown) and framed as a watch writes an event (`watchFrame`). The API stand-in
 * (server.ts) uses it for protobuf slice lists and watches, bench/slice-bytes for its byte counts.
 *
 * It follows the Go code that writes the messages (the generated MarshalToSizedBuffer
 * functions), not only the .proto: Go fields that are not pointers are written even when empty
 * (ObjectMeta.selfLink, .generation, ObjectReference's apiVersion/resourceVersion/fieldPath,
 * ListMeta's strings, Status's strings and code, StatusDetails' strings and retryAfterSeconds,
 * Unknown's content fields), and metav1.Time is written as seconds with nanos 0 (time_proto.go
 * drops the fraction; a zero Time is the tag and length 0). An object is encoded from its JSON
 * field by field; a key the encoder does not know throws, so a field the stand-in adds cannot
 * go missing from the protobuf unnoticed.
 *
 * Field numbers (proto2, from the official definitions; wire type 0 varint, 2 length-delimited):
 *
 * - kubernetes/api discovery/v1/generated.proto:
 *   EndpointSlice: metadata 1, endpoints 2, ports 3, addressType 4.
 *   EndpointSliceList: metadata 1 (ListMeta), items 2.
 *   Endpoint: addresses 1, conditions 2, hostname 3, targetRef 4, deprecatedTopology 5 (map),
 *   nodeName 6, zone 7, hints 8.
 *   EndpointConditions: ready 1, serving 2, terminating 3 (bool).
 *   EndpointPort: name 1, protocol 2, port 3 (int32), appProtocol 4.
 *   EndpointHints: forZones 1, forNodes 2. ForZone: name 1. ForNode: name 1.
 * - kubernetes/api core/v1/generated.proto: ObjectReference: kind 1, namespace 2, name 3, uid 4,
 *   apiVersion 5, resourceVersion 6, fieldPath 7.
 * - kubernetes/apimachinery pkg/apis/meta/v1/generated.proto:
 *   ObjectMeta: name 1, generateName 2, namespace 3, selfLink 4, uid 5, resourceVersion 6,
 *   generation 7 (int64), creationTimestamp 8, deletionTimestamp 9, deletionGracePeriodSeconds 10,
 *   labels 11 (map), annotations 12 (map), ownerReferences 13, finalizers 14, managedFields 17.
 *   ListMeta: selfLink 1, resourceVersion 2, continue 3, remainingItemCount 4 (int64), shardInfo 5.
 *   OwnerReference: kind 1, name 3, uid 4, apiVersion 5, controller 6, blockOwnerDeletion 7.
 *   ManagedFieldsEntry: manager 1, operation 2, apiVersion 3, time 4, fieldsType 6, fieldsV1 7,
 *   subresource 8. FieldsV1: Raw 1 (bytes). Time: seconds 1 (int64), nanos 2 (int32).
 *   WatchEvent: type 1, object 2 (RawExtension). A map entry: key 1, value 2.
 *   Status: metadata 1 (ListMeta), status 2, message 3, reason 4, details 5 (a pointer: only
 *   when set), code 6 (int32). StatusDetails: name 1, group 2, kind 3, causes 4,
 *   retryAfterSeconds 5 (int32), uid 6. StatusCause: reason 1 (Go's Type), message 2, field 3.
 * - kubernetes/apimachinery pkg/runtime/generated.proto: TypeMeta: apiVersion 1, kind 2.
 *   Unknown: typeMeta 1, raw 2, contentEncoding 3, contentType 4. RawExtension: raw 1.
 * - kubernetes/apimachinery pkg/runtime/serializer/protobuf/protobuf.go: the magic prefix
 *   0x6b 0x38 0x73 0x00 (`k8s\0`) before the Unknown; the stream serializer (watch) is the raw
 *   one (no prefix, no Unknown), framed by LengthDelimitedFramer (pkg/util/framer/framer.go:
 *   4-byte big-endian uint32 length, then the frame).
 */
import type { JsonObject } from './server.js';

const MAX_SMALL = 2 ** 31;

/** A varint: non-negative numbers as they are, negative ones as their 64-bit two's complement (10 bytes), as Go writes an int64. */
/** Tags and lengths are nearly all under 2^14: their encodings made once (the stand-in encodes every slice write). */
const SMALL_VARINTS: readonly Buffer[] = Array.from({ length: 1 << 14 }, (_, v) => (v < 0x80 ? Buffer.from([v]) : Buffer.from([(v & 0x7f) | 0x80, v >>> 7])));

function varint(value: number): Buffer {
  const small = SMALL_VARINTS[value];
  if (small !== undefined) return small;
  if (!Number.isSafeInteger(value)) throw new Error(`protobuf: not an integer: ${value}`);
  if (value >= 0 && value < MAX_SMALL) {
    const out: number[] = [];
    let v = value;
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.push(v);
    return Buffer.from(out);
  }
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

export const WIRE_VARINT = 0;
export const WIRE_LEN = 2;

/** A varint's length in bytes. */
function varintSize(value: number): number {
  if (value < 0) return 10;
  let n = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 128)) n++;
  return n;
}

/** Writes a varint at `at`; returns the position after it. */
function writeVarint(buf: Buffer, at: number, value: number): number {
  if (value >= 0 && value < 0x80) {
    buf[at] = value;
    return at + 1;
  }
  const bytes = varint(value);
  bytes.copy(buf, at);
  return at + bytes.length;
}

/**
 * One message being written: its fields in the order added (the callers add them by field
 * number, as Go writes them). Kept as a tree (varints, strings, bytes, nested messages) and
 * written once into one buffer by `finish()`: the stand-in encodes every slice write, and
 * a Buffer per field made its 1 GB heap collect often enough to stall the watches it serves.
 */
export class Message {
  /** A number is a varint (a tag or a value); a string, bytes or a message is length-prefixed. */
  private readonly parts: Array<number | string | Uint8Array | Message> = [];
  private sized = -1;

  int(field: number, value: number): this {
    if (!Number.isSafeInteger(value)) throw new Error(`protobuf: not an integer: ${value}`);
    this.parts.push(field * 8 + WIRE_VARINT, value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.int(field, value ? 1 : 0);
  }

  bytes(field: number, data: Uint8Array): this {
    this.parts.push(field * 8 + WIRE_LEN, data);
    return this;
  }

  string(field: number, value: string): this {
    this.parts.push(field * 8 + WIRE_LEN, value);
    return this;
  }

  message(field: number, value: Message): this {
    this.parts.push(field * 8 + WIRE_LEN, value);
    return this;
  }

  /** A Go map[string]string: one entry message (key 1, value 2, both always written) per pair, keys sorted as Go sorts them. */
  map(field: number, record: Record<string, string>): this {
    for (const k of Object.keys(record).sort(byBytes)) this.message(field, new Message().string(1, k).string(2, record[k] ?? ''));
    return this;
  }

  /** Encoded bytes (computed once: a message is finished once its fields are in). */
  size(): number {
    if (this.sized >= 0) return this.sized;
    let n = 0;
    for (const p of this.parts) {
      if (typeof p === 'number') n += varintSize(p);
      else {
        const len = typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p instanceof Message ? p.size() : p.length;
        n += varintSize(len) + len;
      }
    }
    this.sized = n;
    return n;
  }

  private writeTo(buf: Buffer, start: number): number {
    let at = start;
    for (const p of this.parts) {
      if (typeof p === 'number') at = writeVarint(buf, at, p);
      else if (typeof p === 'string') {
        at = writeVarint(buf, at, Buffer.byteLength(p, 'utf8'));
        at += buf.write(p, at, 'utf8');
      } else if (p instanceof Message) {
        at = writeVarint(buf, at, p.size());
        at = p.writeTo(buf, at);
      } else {
        at = writeVarint(buf, at, p.length);
        buf.set(p, at);
        at += p.length;
      }
    }
    return at;
  }

  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.size());
    const end = this.writeTo(out, 0);
    if (end !== out.length) throw new Error(`protobuf: wrote ${end} bytes of ${out.length}`);
    return out;
  }
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

// ---------------------------------------------------------------- JSON -> protobuf, as the Go types marshal

type Json = Record<string, unknown>;

/**
 * Reads one JSON object field by field: every key must be taken (`done` throws on a key left
 * over), so a field the stand-in adds and this encoder does not know fails the run.
 */
class Fields {
  private readonly left: Set<string>;

  constructor(
    private readonly where: string,
    private readonly o: Json,
  ) {
    this.left = new Set(Object.keys(o));
  }

  private take(key: string): unknown {
    this.left.delete(key);
    const v = this.o[key];
    return v === null ? undefined : v;
  }

  str(key: string): string | undefined {
    const v = this.take(key);
    if (v !== undefined && typeof v !== 'string') throw new Error(`${this.where}.${key}: not a string`);
    return v;
  }

  num(key: string): number | undefined {
    const v = this.take(key);
    if (v !== undefined && typeof v !== 'number') throw new Error(`${this.where}.${key}: not a number`);
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.take(key);
    if (v !== undefined && typeof v !== 'boolean') throw new Error(`${this.where}.${key}: not a boolean`);
    return v;
  }

  obj(key: string): Json | undefined {
    const v = this.take(key);
    if (v !== undefined && (typeof v !== 'object' || Array.isArray(v))) throw new Error(`${this.where}.${key}: not an object`);
    return v as Json | undefined;
  }

  list(key: string): unknown[] {
    const v = this.take(key);
    if (v !== undefined && !Array.isArray(v)) throw new Error(`${this.where}.${key}: not a list`);
    return v ?? [];
  }

  strings(key: string): Record<string, string> {
    return (this.obj(key) ?? {}) as Record<string, string>;
  }

  /** Keys dropped on purpose (TypeMeta: the protobuf carries the kind in the Unknown envelope, not in the object). */
  skip(...keys: string[]): void {
    for (const k of keys) this.left.delete(k);
  }

  done(): void {
    if (this.left.size > 0) throw new Error(`${this.where}: fields this encoder does not know: ${[...this.left].join(', ')}`);
  }
}

/** metav1.Time: seconds only (time_proto.go's ProtoTime leaves nanos 0, and Timestamp writes both fields). */
function time(rfc3339: string): Message {
  const ms = Date.parse(rfc3339);
  if (!Number.isFinite(ms)) throw new Error(`protobuf: not a time: ${rfc3339}`);
  return new Message().int(1, Math.floor(ms / 1000)).int(2, 0);
}

function ownerReference(o: Json): Message {
  const f = new Fields('ownerReference', o);
  const m = new Message()
    .string(1, f.str('kind') ?? '')
    .string(3, f.str('name') ?? '')
    .string(4, f.str('uid') ?? '')
    .string(5, f.str('apiVersion') ?? '');
  const controller = f.bool('controller');
  if (controller !== undefined) m.bool(6, controller);
  const block = f.bool('blockOwnerDeletion');
  if (block !== undefined) m.bool(7, block);
  f.done();
  return m;
}

function managedFieldsEntry(o: Json): Message {
  const f = new Fields('managedFields[]', o);
  const m = new Message()
    .string(1, f.str('manager') ?? '')
    .string(2, f.str('operation') ?? '')
    .string(3, f.str('apiVersion') ?? '');
  const t = f.str('time');
  if (t !== undefined) m.message(4, time(t));
  m.string(6, f.str('fieldsType') ?? '');
  const fields = f.obj('fieldsV1');
  if (fields !== undefined) m.message(7, new Message().bytes(1, Buffer.from(JSON.stringify(fields))));
  m.string(8, f.str('subresource') ?? '');
  f.done();
  return m;
}

function objectMeta(o: Json): Message {
  const f = new Fields('metadata', o);
  const m = new Message()
    .string(1, f.str('name') ?? '')
    .string(2, f.str('generateName') ?? '')
    .string(3, f.str('namespace') ?? '')
    .string(4, f.str('selfLink') ?? '')
    .string(5, f.str('uid') ?? '')
    .string(6, f.str('resourceVersion') ?? '')
    .int(7, f.num('generation') ?? 0);
  const created = f.str('creationTimestamp');
  m.message(8, created === undefined ? new Message() : time(created)); // a zero Time: the tag and length 0
  const deleted = f.str('deletionTimestamp');
  if (deleted !== undefined) m.message(9, time(deleted));
  const grace = f.num('deletionGracePeriodSeconds');
  if (grace !== undefined) m.int(10, grace);
  m.map(11, f.strings('labels'));
  m.map(12, f.strings('annotations'));
  for (const r of f.list('ownerReferences')) m.message(13, ownerReference(r as Json));
  for (const s of f.list('finalizers')) m.string(14, s as string);
  for (const e of f.list('managedFields')) m.message(17, managedFieldsEntry(e as Json));
  f.done();
  return m;
}

function objectReference(o: Json): Message {
  const f = new Fields('targetRef', o);
  const m = new Message()
    .string(1, f.str('kind') ?? '')
    .string(2, f.str('namespace') ?? '')
    .string(3, f.str('name') ?? '')
    .string(4, f.str('uid') ?? '')
    .string(5, f.str('apiVersion') ?? '')
    .string(6, f.str('resourceVersion') ?? '')
    .string(7, f.str('fieldPath') ?? '');
  f.done();
  return m;
}

function endpoint(o: Json): Message {
  const f = new Fields('endpoint', o);
  const m = new Message();
  for (const a of f.list('addresses')) m.string(1, a as string);
  const c = new Fields('conditions', f.obj('conditions') ?? {});
  const conditions = new Message();
  for (const [n, key] of [[1, 'ready'], [2, 'serving'], [3, 'terminating']] as const) {
    const v = c.bool(key);
    if (v !== undefined) conditions.bool(n, v);
  }
  c.done();
  m.message(2, conditions); // a struct, not a pointer: always written
  const hostname = f.str('hostname');
  if (hostname !== undefined) m.string(3, hostname);
  const ref = f.obj('targetRef');
  if (ref !== undefined) m.message(4, objectReference(ref));
  m.map(5, f.strings('deprecatedTopology'));
  const nodeName = f.str('nodeName');
  if (nodeName !== undefined) m.string(6, nodeName);
  const zone = f.str('zone');
  if (zone !== undefined) m.string(7, zone);
  const hints = f.obj('hints');
  if (hints !== undefined) {
    const h = new Fields('hints', hints);
    const hm = new Message();
    for (const z of h.list('forZones')) hm.message(1, new Message().string(1, (z as { name: string }).name));
    for (const n of h.list('forNodes')) hm.message(2, new Message().string(1, (n as { name: string }).name));
    h.done();
    m.message(8, hm);
  }
  f.done();
  return m;
}

function endpointPort(o: Json): Message {
  const f = new Fields('port', o);
  const m = new Message();
  const name = f.str('name');
  if (name !== undefined) m.string(1, name);
  const protocol = f.str('protocol');
  if (protocol !== undefined) m.string(2, protocol);
  const port = f.num('port');
  if (port !== undefined) m.int(3, port);
  const appProtocol = f.str('appProtocol');
  if (appProtocol !== undefined) m.string(4, appProtocol);
  f.done();
  return m;
}

/**
 * The EndpointSlice message (discovery/v1), from the slice's JSON. Its `kind` and `apiVersion`
 * are dropped (the envelope carries them), so a BOOKMARK's object (only those and metadata with
 * resourceVersion and annotations) is an EndpointSlice with only that metadata, as the API
 * server sends it. A key this encoder does not know throws.
 */
export function encodeEndpointSlice(slice: JsonObject): Buffer {
  const f = new Fields('EndpointSlice', slice);
  f.skip('kind', 'apiVersion');
  const m = new Message().message(1, objectMeta(f.obj('metadata') ?? {}));
  for (const e of f.list('endpoints')) m.message(2, endpoint(e as Json));
  for (const p of f.list('ports')) m.message(3, endpointPort(p as Json));
  m.string(4, f.str('addressType') ?? '');
  f.done();
  return m.finish();
}

/** The protobuf Serializer's magic prefix, `k8s\0`. */
export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** metav1.ListMeta: its strings always written, remainingItemCount only when set. */
function listMeta(o: Json): Message {
  const f = new Fields('ListMeta', o);
  const m = new Message()
    .string(1, f.str('selfLink') ?? '')
    .string(2, f.str('resourceVersion') ?? '')
    .string(3, f.str('continue') ?? '');
  const remaining = f.num('remainingItemCount');
  if (remaining !== undefined) m.int(4, remaining);
  f.done();
  return m;
}

function statusCause(o: Json): Message {
  const f = new Fields('StatusCause', o);
  const m = new Message()
    .string(1, f.str('reason') ?? '')
    .string(2, f.str('message') ?? '')
    .string(3, f.str('field') ?? '');
  f.done();
  return m;
}

function statusDetails(o: Json): Message {
  const f = new Fields('StatusDetails', o);
  const m = new Message()
    .string(1, f.str('name') ?? '')
    .string(2, f.str('group') ?? '')
    .string(3, f.str('kind') ?? '');
  for (const c of f.list('causes')) m.message(4, statusCause(c as Json));
  m.int(5, f.num('retryAfterSeconds') ?? 0).string(6, f.str('uid') ?? '');
  f.done();
  return m;
}

/** The metav1.Status message, from its JSON (`kind` and `apiVersion` dropped: the envelope carries them). */
export function encodeStatus(status: JsonObject): Buffer {
  const f = new Fields('Status', status);
  f.skip('kind', 'apiVersion');
  const m = new Message()
    .message(1, listMeta(f.obj('metadata') ?? {}))
    .string(2, f.str('status') ?? '')
    .string(3, f.str('message') ?? '')
    .string(4, f.str('reason') ?? '');
  const details = f.obj('details');
  if (details !== undefined) m.message(5, statusDetails(details));
  m.int(6, f.num('code') ?? 0);
  f.done();
  return m.finish();
}

/** An object as the protobuf Serializer writes it: the magic, then runtime.Unknown {typeMeta {apiVersion, kind}, raw, contentEncoding "", contentType ""}. */
export function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const unknown = new Message()
    .message(1, new Message().string(1, apiVersion).string(2, kind))
    .bytes(2, raw)
    .string(3, '')
    .string(4, '');
  return Buffer.concat([MAGIC, unknown.finish()]);
}

/**
 * A list as the API server writes it for protobuf: `envelope` of the list kind, its raw the list
 * message {metadata 1 (ListMeta), items 2 (each item's message, e.g. `encodeEndpointSlice`)}.
 */
export function encodeList(apiVersion: string, listKind: string, metadata: Record<string, string>, items: readonly Buffer[]): Buffer {
  const list = new Message().message(1, listMeta(metadata));
  for (const item of items) list.bytes(2, item);
  return envelope(apiVersion, listKind, list.finish());
}

/**
 * One watch event as the API server writes it for protobuf: a 4-byte big-endian length, then
 * metav1.WatchEvent {type, object: RawExtension {raw: `object`}} (`object` an `envelope`).
 */
export function watchFrame(type: string, object: Buffer): Buffer {
  const event = new Message().string(1, type).message(2, new Message().bytes(1, object)).finish();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(event.length);
  return Buffer.concat([head, event]);
}
