/**
 * apimachinery's meta/v1 messages as the JSON API shows them (field numbers from
 * pkg/apis/meta/v1/generated.proto): ObjectMeta (the fields a list/watch and the agent read:
 * name, namespace, uid, resourceVersion, deletionTimestamp, labels, annotations; the rest,
 * managedFields included, is skipped), metav1.Time and Status (an ERROR event's object).
 */
import { ProtoReader } from './wire.js';

export interface ObjectMetaJson {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** map<string, string> entry: key 1, value 2. */
function readMapEntry(r: ProtoReader, into: Record<string, string>): void {
  const e = r.message();
  let key = '';
  let value = '';
  while (e.next()) {
    if (e.field === 1) key = e.string();
    else if (e.field === 2) value = e.string();
    else e.skip();
  }
  // A key `__proto__` (no valid label or annotation has one; JSON.parse makes it an own property) set by assignment would be the prototype.
  if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}

/** metav1.Time: seconds 1, nanos 2; as JSON shows it (RFC 3339, whole seconds). */
export function readTime(r: ProtoReader): string {
  const t = r.message();
  let seconds = 0;
  while (t.next()) {
    if (t.field === 1 && t.wire === 0) seconds = t.varint();
    else t.skip();
  }
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** Go writes a string field of a struct even when empty; JSON leaves it out (omitempty): so does this. */
export function readObjectMeta(r: ProtoReader): ObjectMetaJson {
  const m = r.message();
  const out: ObjectMetaJson = {};
  let s: string;
  while (m.next()) {
    switch (m.field) {
      case 1: if ((s = m.string()) !== '') out.name = s; break;
      case 3: if ((s = m.string()) !== '') out.namespace = s; break;
      case 5: if ((s = m.string()) !== '') out.uid = s; break;
      case 6: if ((s = m.string()) !== '') out.resourceVersion = s; break;
      case 9: out.deletionTimestamp = readTime(m); break;
      case 11: readMapEntry(m, (out.labels ??= {})); break;
      case 12: readMapEntry(m, (out.annotations ??= {})); break;
      default: m.skip();
    }
  }
  return out;
}

export interface StatusJson {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { resourceVersion?: string };
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

/** metav1.Status: metadata 1 (ListMeta: resourceVersion 2), status 2, message 3, reason 4, details 5 (skipped), code 6. */
export function readStatus(buf: Buffer, start: number, end: number): StatusJson {
  const r = new ProtoReader(buf, start, end);
  const out: StatusJson = { kind: 'Status', apiVersion: 'v1', metadata: {} };
  while (r.next()) {
    switch (r.field) {
      case 1: {
        const lm = r.message();
        while (lm.next()) {
          if (lm.field !== 2) lm.skip();
          else {
            const rv = lm.string();
            if (rv !== '') out.metadata.resourceVersion = rv;
          }
        }
        break;
      }
      case 2: out.status = r.string(); break;
      case 3: out.message = r.string(); break;
      case 4: out.reason = r.string(); break;
      case 6: out.code = r.int32(); break;
      default: r.skip();
    }
  }
  return out;
}
