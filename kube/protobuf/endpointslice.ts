/**
 * A `discovery.k8s.io/v1` EndpointSlice from its protobuf message, as the JSON API shows the
 * fields the agent reads (field numbers from kubernetes/api discovery/v1/generated.proto and
 * core/v1 ObjectReference): metadata, addressType, ports (name, protocol, port), endpoints
 * (addresses, conditions, nodeName, targetRef). Hostnames, zones, hints and the deprecated
 * topology are skipped. Condition fields absent from the message are absent here (proto2
 * optional: unset, as JSON leaves them out).
 */
import { readObjectMeta, type ObjectMetaJson } from './meta.js';
import { ProtoReader } from './wire.js';

export interface EndpointJson {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  nodeName?: string;
  targetRef?: { kind?: string; namespace?: string; name?: string; uid?: string };
}

export interface EndpointSliceJson {
  kind: 'EndpointSlice';
  apiVersion: 'discovery.k8s.io/v1';
  metadata: ObjectMetaJson;
  addressType?: string;
  ports?: Array<{ name?: string; protocol?: string; port?: number }>;
  endpoints?: EndpointJson[];
}

/** EndpointConditions: ready 1, serving 2, terminating 3. */
function readConditions(r: ProtoReader): EndpointJson['conditions'] {
  const c = r.message();
  const out: NonNullable<EndpointJson['conditions']> = {};
  while (c.next()) {
    if (c.field === 1) out.ready = c.bool();
    else if (c.field === 2) out.serving = c.bool();
    else if (c.field === 3) out.terminating = c.bool();
    else c.skip();
  }
  return out;
}

/** ObjectReference: kind 1, namespace 2, name 3, uid 4 (the rest skipped); empty strings are left out, as JSON omits them. */
function readTargetRef(r: ProtoReader): EndpointJson['targetRef'] {
  const t = r.message();
  const out: NonNullable<EndpointJson['targetRef']> = {};
  let s: string;
  // Assigned only when set: no `delete` afterwards (it would turn 75 objects an event into dictionaries).
  while (t.next()) {
    switch (t.field) {
      case 1: if ((s = t.string()) !== '') out.kind = s; break;
      case 2: if ((s = t.string()) !== '') out.namespace = s; break;
      case 3: if ((s = t.string()) !== '') out.name = s; break;
      case 4: if ((s = t.string()) !== '') out.uid = s; break;
      default: t.skip();
    }
  }
  return out;
}

/** Endpoint: addresses 1, conditions 2, targetRef 4, nodeName 6 (hostname 3, topology 5, zone 7, hints 8 skipped). */
function readEndpoint(r: ProtoReader): EndpointJson {
  return readEndpointMessage(r.message());
}

/** An Endpoint message already opened (its reader). */
export function readEndpointMessage(e: ProtoReader): EndpointJson {
  const out: EndpointJson = { addresses: [] };
  while (e.next()) {
    switch (e.field) {
      case 1: out.addresses.push(e.string()); break;
      case 2: out.conditions = readConditions(e); break;
      case 4: out.targetRef = readTargetRef(e); break;
      case 6: out.nodeName = e.string(); break;
      default: e.skip();
    }
  }
  return out;
}

/** EndpointPort: name 1, protocol 2, port 3 (appProtocol 4 skipped). */
export function readPort(r: ProtoReader): { name?: string; protocol?: string; port?: number } {
  const p = r.message();
  const out: { name?: string; protocol?: string; port?: number } = {};
  while (p.next()) {
    if (p.field === 1) out.name = p.string();
    else if (p.field === 2) out.protocol = p.string();
    else if (p.field === 3) out.port = p.int32();
    else p.skip();
  }
  return out;
}

/**
 * EndpointSlice: metadata 1, endpoints 2, ports 3, addressType 4. A BOOKMARK's is metadata only.
 * Every endpoint decoded at once: the watch reads slices lazily (lazy-endpointslice.ts), and
 * this plain decoder is what that one is tested against.
 */
export function readEndpointSlice(buf: Buffer, start: number, end: number): EndpointSliceJson {
  const r = new ProtoReader(buf, start, end);
  const out: EndpointSliceJson = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: {} };
  while (r.next()) {
    switch (r.field) {
      case 1: out.metadata = readObjectMeta(r); break;
      case 2: (out.endpoints ??= []).push(readEndpoint(r)); break;
      case 3: (out.ports ??= []).push(readPort(r)); break;
      case 4: out.addressType = r.string(); break;
      default: r.skip();
    }
  }
  return out;
}

