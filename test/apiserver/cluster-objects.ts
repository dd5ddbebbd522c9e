/**
 * Namespaces and Services as the API server stores them (the defaults it fills in), and a
 * builder of Services for tests, the lab and the bench.
 */
import type { JsonObject } from './server.js';

/** A Namespace with the `kubernetes.io/metadata.name` label the real server always sets. */
export function namespaceObject(name: string, labels: Record<string, string>): JsonObject {
  return {
    metadata: { name, labels: { ...labels, 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

export interface ServicePortSpec {
  name?: string;
  port: number;
  /** A number only: the stand-in's controller does not resolve named container ports. */
  targetPort?: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
}

interface ServiceSpec {
  clusterIP?: string;
  clusterIPs?: string[];
  type?: string;
  ipFamilies?: string[];
  ports?: ServicePortSpec[];
  selector?: Record<string, string>;
}

/**
 * The stored form of a Service: type ClusterIP, protocol TCP and targetPort = port by default,
 * a clusterIP (10.96.0.0/12, from `nextIp`) unless it has one or is headless (`None`), kept
 * from `existing` on a replace as the real server keeps it immutable.
 */
export function serviceObject(service: JsonObject, existing: JsonObject | undefined, nextIp: () => number): JsonObject {
  const copy = structuredClone(service);
  const spec = (copy.spec ?? {}) as ServiceSpec;
  const before = existing?.spec as ServiceSpec | undefined;
  spec.type ??= 'ClusterIP';
  spec.ports = (spec.ports ?? []).map((p) => ({ ...p, protocol: p.protocol ?? 'TCP', targetPort: p.targetPort ?? p.port }));
  if (spec.clusterIP === undefined || spec.clusterIP === '') {
    if (before?.clusterIP !== undefined) spec.clusterIP = before.clusterIP;
    else {
      const n = nextIp();
      spec.clusterIP = `10.96.${(n >> 8) & 255}.${n & 255}`;
    }
  }
  spec.clusterIPs ??= [spec.clusterIP];
  spec.ipFamilies ??= [spec.clusterIP.includes(':') ? 'IPv6' : 'IPv4'];
  copy.spec = spec;
  return copy;
}

export interface ServiceOptions {
  name: string;
  namespace?: string;
  /** Pods with these labels are its endpoints (spec.selector). */
  selector: Record<string, string>;
  ports: ServicePortSpec[];
  labels?: Record<string, string>;
  headless?: boolean;
}

/** A Service for `putService` (the stand-in fills in the rest). */
export function service(o: ServiceOptions): JsonObject {
  return {
    metadata: { name: o.name, namespace: o.namespace ?? 'default', ...(o.labels === undefined ? {} : { labels: o.labels }) },
    spec: { selector: o.selector, ports: o.ports, ...(o.headless === true ? { clusterIP: 'None' } : {}) },
  };
}
