/**
 * One watch event as a Kubernetes API server frames it for a protobuf client
 * (`Content-Type: application/vnd.kubernetes.protobuf;stream=watch`): the frame (the stream's
 * 4-byte length already taken off, frames.ts) is a metav1.WatchEvent {type 1, object 2:
 * RawExtension {raw 1}}, and the raw object is `k8s\0` then a runtime.Unknown {typeMeta 1
 * {apiVersion 1, kind 2}, raw 2, contentEncoding 3, contentType 4} whose raw is the object's
 * own message (apimachinery runtime/serializer/protobuf). Objects come out as the JSON API
 * shows them, for the kinds decoded here: EndpointSlice (its events and bookmarks; its endpoints
 * decoded when read, LazyEndpointSlice) and Status (an ERROR event). Any other kind, or an encoded (compressed) raw, is a ProtobufError: the
 * watch ends and is watched again as JSON.
 */
import { readLazyEndpointSlice } from './lazy-endpointslice.js';
import { readStatus } from './meta.js';
import { ProtoReader, ProtobufError } from './wire.js';

const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

export interface DecodedWatchEvent {
  type: string;
  object: unknown;
}

/** Decodes one object envelope (`k8s\0` + Unknown) in buf[start, end). */
export function readEnvelope(buf: Buffer, start: number, end: number): unknown {
  if (end - start < MAGIC.length || MAGIC.some((b, i) => buf[start + i] !== b)) throw new ProtobufError('protobuf: an object without the k8s\\0 prefix');
  const u = new ProtoReader(buf, start + MAGIC.length, end);
  let kind = '';
  let rawStart = -1;
  let rawEnd = -1;
  let encoding = '';
  while (u.next()) {
    if (u.field === 1) {
      const tm = u.message();
      while (tm.next()) {
        if (tm.field === 2) kind = tm.string();
        else tm.skip();
      }
    } else if (u.field === 2) {
      rawStart = u.takeSpan();
      rawEnd = u.spanEnd;
    } else if (u.field === 3) encoding = u.string();
    else u.skip();
  }
  if (encoding !== '') throw new ProtobufError(`protobuf: an object with content encoding ${encoding.slice(0, 40)}`);
  if (rawStart < 0) throw new ProtobufError(`protobuf: a ${kind || 'object'} without its message`);
  if (kind === 'EndpointSlice') return readLazyEndpointSlice(buf, rawStart, rawEnd);
  if (kind === 'Status') return readStatus(buf, rawStart, rawEnd);
  throw new ProtobufError(`protobuf: kind ${kind.slice(0, 60) || '(none)'} is not decoded here`);
}

/** Decodes one watch frame (a WatchEvent). */
export function readWatchEvent(frame: Buffer): DecodedWatchEvent {
  const r = new ProtoReader(frame);
  let type = '';
  let object: unknown;
  while (r.next()) {
    if (r.field === 1) type = r.string();
    else if (r.field === 2) {
      const ext = r.message();
      while (ext.next()) {
        if (ext.field === 1) {
          const start = ext.takeSpan();
          object = readEnvelope(frame, start, ext.spanEnd);
        } else ext.skip();
      }
    } else r.skip();
  }
  if (type === '') throw new ProtobufError('protobuf: a watch event without its type');
  return { type, object };
}
