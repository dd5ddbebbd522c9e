/**
 * The stand-in's EndpointSlice controller: keeps the `discovery.k8s.io/v1` slices of every
 * Service with a selector from the pods of its namespace, as Kubernetes' controller
 * (endpointslice-controller.k8s.io) makes them, so that clients see slices derived from pods:
 *
 * - An endpoint per selected pod with an IP whose phase is not Succeeded/Failed: one address
 *   (its first IP of the slice's family), conditions `serving` = the pod's Ready condition,
 *   `terminating` = deletionTimestamp set, `ready` = serving && !terminating; `nodeName`;
 *   `targetRef` to the pod (uid included).
 * - Slices per address family of the Service (`spec.ipFamilies`: a dual-stack pod is in both
 *   slices of a dual-stack Service), at most 100 endpoints each. An endpoint stays in the slice
 *   it is in; a new one goes into the first slice of its family with room, or a new slice.
 *   Emptied slices are deleted; a Service without endpoints has one placeholder slice (no
 *   endpoints, no ports, the Service's first family), reused by the first endpoints to come.
 * - Slice ports from the Service's ports (numeric targetPort; named container ports are not
 *   resolved), labels the Service's plus `kubernetes.io/service-name`,
 *   `endpointslice.kubernetes.io/managed-by` and, headless (`clusterIP: None`),
 *   `service.kubernetes.io/headless`; `generateName: <svc>-`, names `<svc>-<5 random chars>`,
 *   an ownerReference to the Service. A slice is written only when its content changed.
 * - Incremental: a pod event looks only at the Services of its namespace that select its old
 *   or new labels (indexed by one selector pair), and writes only the slices whose endpoints
 *   changed; a Service change looks up its pods through a label index. Both indexes are built
 *   when the first Service with a selector arrives: until then pod events cost nothing.
 *
 * A Service losing its selector, or deleted, loses its slices here at once (the real
 * controller leaves the first to others and the garbage collector deletes the second).
 */
import type { JsonObject } from './server.js';

/** What the controller needs of the server: its pods, and writing slices. */
export interface SliceSink {
  listPods(): JsonObject[];
  getPod(namespace: string, name: string): JsonObject | undefined;
  /** Stores a slice built for this write (not copied). */
  putControllerSlice(slice: JsonObject): JsonObject;
  deleteEndpointSlice(namespace: string, name: string): boolean;
}

type Family = 'IPv4' | 'IPv6';

export const MAX_ENDPOINTS_PER_SLICE = 100;
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY_CONTROLLER = 'endpointslice-controller.k8s.io';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';

interface Endpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  nodeName?: string;
  targetRef: { kind: 'Pod'; namespace: string; name: string; uid: string };
}

interface SliceState {
  name: string;
  family: Family;
  /** By pod name, with the endpoint's JSON to tell a real change from a repeat. */
  endpoints: Map<string, { endpoint: Endpoint; json: string }>;
  placeholder: boolean;
}

interface ServiceState {
  namespace: string;
  name: string;
  uid: string;
  /** spec.selector's pairs, sorted by key; the first one indexes the Service. */
  selector: Array<[string, string]>;
  families: Family[];
  labels: Record<string, string>;
  ports: Array<Record<string, unknown>>;
  slices: SliceState[];
  /** `<family>/<pod name>` -> the slice holding that endpoint. */
  where: Map<string, SliceState>;
}

type Meta = { name?: string; namespace?: string; uid?: string; labels?: Record<string, string>; deletionTimestamp?: string };

const metaOf = (o: JsonObject): Meta => (o.metadata ?? {});
const pair = (k: string, v: string): string => `${k}=${v}`;
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function familyOf(ip: string): Family {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

function selectorOf(service: JsonObject): Array<[string, string]> {
  const selector = (service.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {};
  return Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function selects(selector: Array<[string, string]>, labels: Record<string, string> | undefined): boolean {
  return labels !== undefined && selector.every(([k, v]) => labels[k] === v);
}

/** The endpoints of a pod per family (empty when it has no IP or has finished). */
function endpointsOf(pod: JsonObject): Map<Family, Endpoint> {
  const out = new Map<Family, Endpoint>();
  const status = (pod.status ?? {}) as { phase?: string; podIP?: string; podIPs?: Array<{ ip: string }>; conditions?: Array<{ type: string; status: string }> };
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return out;
  const ips = status.podIPs?.map((p) => p.ip) ?? (status.podIP === undefined ? [] : [status.podIP]);
  const meta = metaOf(pod);
  const serving = status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const terminating = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  for (const ip of ips) {
    const family = familyOf(ip);
    if (out.has(family) || ip === '') continue;
    out.set(family, {
      addresses: [ip],
      conditions: { ready: serving && !terminating, serving, terminating },
      ...(nodeName === undefined || nodeName === '' ? {} : { nodeName }),
      targetRef: { kind: 'Pod', namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: meta.uid ?? '' },
    });
  }
  return out;
}

export class EndpointSliceController {
  private active = false;
  /** namespace -> `key=value` -> pod names with that label. */
  private readonly podsByLabel = new Map<string, Map<string, Set<string>>>();
  /** namespace -> the first pair of a selector -> Services. */
  private readonly servicesByPair = new Map<string, Map<string, Set<ServiceState>>>();
  private readonly services = new Map<string, ServiceState>();
  private readonly names = new Set<string>();
  /** Slice writes and deletes, for tests and benches. */
  readonly stats = { writes: 0, deletes: 0 };

  constructor(private readonly sink: SliceSink) {}

  /** A pod was created, changed (`previous` its state before) or deleted (`next` undefined). */
  podChanged(previous: JsonObject | undefined, next: JsonObject | undefined): void {
    if (!this.active) return;
    const meta = metaOf(next ?? previous ?? {});
    const namespace = meta.namespace ?? 'default';
    const name = meta.name ?? '';
    const before = previous === undefined ? undefined : metaOf(previous).labels;
    const after = next === undefined ? undefined : metaOf(next).labels;
    this.indexPod(namespace, name, before, -1);
    this.indexPod(namespace, name, after, 1);
    const byPair = this.servicesByPair.get(namespace);
    if (byPair === undefined) return;
    const candidates = new Set<ServiceState>();
    for (const labels of [before, after]) {
      for (const [k, v] of Object.entries(labels ?? {})) for (const s of byPair.get(pair(k, v)) ?? []) candidates.add(s);
    }
    for (const svc of candidates) {
      if (!selects(svc.selector, before) && !selects(svc.selector, after)) continue;
      const dirty = new Set<SliceState>();
      this.placePod(svc, name, next !== undefined && selects(svc.selector, after) ? next : undefined, dirty);
      this.flush(svc, dirty);
    }
  }

  /** A Service was created, changed or deleted (`next` undefined). */
  serviceChanged(previous: JsonObject | undefined, next: JsonObject | undefined): void {
    const meta = metaOf(next ?? previous ?? {});
    const key = `${meta.namespace ?? 'default'}/${meta.name ?? ''}`;
    const existing = this.services.get(key);
    const selector = next === undefined ? [] : selectorOf(next);
    if (selector.length === 0) {
      if (existing !== undefined) this.dropService(key, existing);
      return;
    }
    this.activate();
    const spec = (next?.spec ?? {}) as { clusterIP?: string; ipFamilies?: string[]; ports?: Array<{ name?: string; port: number; targetPort?: number | string; protocol?: string; appProtocol?: string }> };
    const labels: Record<string, string> = { ...(metaOf(next!).labels ?? {}), [LABEL_SERVICE_NAME]: meta.name ?? '', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER };
    if (spec.clusterIP === 'None') labels[LABEL_HEADLESS] = '';
    const ports = (spec.ports ?? []).map((p) => ({
      name: p.name ?? '',
      protocol: p.protocol ?? 'TCP',
      port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    }));
    const families = (spec.ipFamilies ?? ['IPv4']).filter((f): f is Family => f === 'IPv4' || f === 'IPv6');
    const svc: ServiceState = existing ?? { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: '', selector: [], families, labels: {}, ports: [], slices: [], where: new Map() };
    const dirty = new Set<SliceState>();
    const looks = JSON.stringify([labels, ports, meta.uid]);
    if (existing === undefined || looks !== JSON.stringify([svc.labels, svc.ports, svc.uid])) for (const s of svc.slices) dirty.add(s);
    svc.uid = meta.uid ?? '';
    svc.labels = labels;
    svc.ports = ports;
    svc.families = families.length === 0 ? ['IPv4'] : families;
    const oldSelector = svc.selector;
    if (existing === undefined || JSON.stringify(oldSelector) !== JSON.stringify(selector)) {
      if (existing !== undefined) this.indexService(svc, -1);
      svc.selector = selector;
      this.services.set(key, svc);
      this.indexService(svc, 1);
      const members = new Set<string>([...svc.where.keys()].map((k) => k.slice(k.indexOf('/') + 1)));
      for (const name of this.podsSelected(svc)) members.add(name);
      for (const name of members) {
        const pod = this.sink.getPod(svc.namespace, name);
        this.placePod(svc, name, pod !== undefined && selects(selector, metaOf(pod).labels) ? pod : undefined, dirty);
      }
    } else {
      // Families may have changed: re-place every member.
      for (const k of [...svc.where.keys()]) {
        const name = k.slice(k.indexOf('/') + 1);
        this.placePod(svc, name, this.sink.getPod(svc.namespace, name), dirty);
      }
    }
    this.flush(svc, dirty);
  }

  /** The slices the controller holds for a Service (names, families, pod names), for tests. */
  slicesOf(namespace: string, name: string): Array<{ name: string; family: Family; pods: string[] }> {
    return (this.services.get(`${namespace}/${name}`)?.slices ?? []).map((s) => ({ name: s.name, family: s.family, pods: [...s.endpoints.keys()] }));
  }

  private activate(): void {
    if (this.active) return;
    this.active = true;
    for (const pod of this.sink.listPods()) {
      const meta = metaOf(pod);
      this.indexPod(meta.namespace ?? 'default', meta.name ?? '', meta.labels, 1);
    }
  }

  private indexPod(namespace: string, name: string, labels: Record<string, string> | undefined, delta: 1 | -1): void {
    if (labels === undefined) return;
    let byLabel = this.podsByLabel.get(namespace);
    if (byLabel === undefined) {
      if (delta < 0) return;
      this.podsByLabel.set(namespace, (byLabel = new Map<string, Set<string>>()));
    }
    for (const [k, v] of Object.entries(labels)) {
      const key = pair(k, v);
      let names = byLabel.get(key);
      if (delta > 0) {
        if (names === undefined) byLabel.set(key, (names = new Set()));
        names.add(name);
      } else if (names !== undefined) {
        names.delete(name);
        if (names.size === 0) byLabel.delete(key);
      }
    }
  }

  private indexService(svc: ServiceState, delta: 1 | -1): void {
    const first = svc.selector[0];
    if (first === undefined) return;
    let byPair = this.servicesByPair.get(svc.namespace);
    if (byPair === undefined) this.servicesByPair.set(svc.namespace, (byPair = new Map<string, Set<ServiceState>>()));
    const key = pair(first[0], first[1]);
    let set = byPair.get(key);
    if (set === undefined) byPair.set(key, (set = new Set()));
    if (delta > 0) set.add(svc);
    else {
      set.delete(svc);
      if (set.size === 0) byPair.delete(key);
    }
  }

  /** Pod names of the Service's namespace its selector matches (through its rarest pair). */
  private podsSelected(svc: ServiceState): string[] {
    const byLabel = this.podsByLabel.get(svc.namespace);
    if (byLabel === undefined) return [];
    let smallest: Set<string> | undefined;
    for (const [k, v] of svc.selector) {
      const names = byLabel.get(pair(k, v));
      if (names === undefined) return [];
      if (smallest === undefined || names.size < smallest.size) smallest = names;
    }
    return [...(smallest ?? [])];
  }

  /** Puts a pod's endpoints where they belong (`pod` undefined: nowhere); slices changed go into `dirty`. */
  private placePod(svc: ServiceState, podName: string, pod: JsonObject | undefined, dirty: Set<SliceState>): void {
    const wanted = pod === undefined ? new Map<Family, Endpoint>() : endpointsOf(pod);
    for (const family of ['IPv4', 'IPv6'] as const) {
      const key = `${family}/${podName}`;
      const at = svc.where.get(key);
      const endpoint = svc.families.includes(family) ? wanted.get(family) : undefined;
      if (endpoint === undefined) {
        if (at === undefined) continue;
        at.endpoints.delete(podName);
        svc.where.delete(key);
        dirty.add(at);
        continue;
      }
      const json = JSON.stringify(endpoint);
      if (at !== undefined) {
        if (at.endpoints.get(podName)?.json === json) continue;
        at.endpoints.set(podName, { endpoint, json });
        dirty.add(at);
        continue;
      }
      const slice = this.sliceWithRoom(svc, family);
      slice.endpoints.set(podName, { endpoint, json });
      svc.where.set(key, slice);
      dirty.add(slice);
    }
  }

  /** The first slice of `family` with room; else the placeholder, turned into one; else a new one. */
  private sliceWithRoom(svc: ServiceState, family: Family): SliceState {
    const roomy = svc.slices.find((s) => s.family === family && !s.placeholder && s.endpoints.size < MAX_ENDPOINTS_PER_SLICE);
    if (roomy !== undefined) return roomy;
    const placeholder = svc.slices.find((s) => s.placeholder);
    if (placeholder !== undefined) {
      placeholder.placeholder = false;
      placeholder.family = family;
      return placeholder;
    }
    const slice: SliceState = { name: this.newName(svc.name), family, endpoints: new Map(), placeholder: false };
    svc.slices.push(slice);
    return slice;
  }

  private newName(service: string): string {
    for (;;) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += ALPHANUMS[Math.floor(Math.random() * ALPHANUMS.length)];
      const name = `${service}-${suffix}`;
      if (!this.names.has(name)) {
        this.names.add(name);
        return name;
      }
    }
  }

  /**
   * Deletes emptied slices (a Service without endpoints keeps, or gets, one placeholder) and
   * writes the slices that changed.
   */
  private flush(svc: ServiceState, dirty: Set<SliceState>): void {
    const keep: SliceState[] = [];
    for (const s of svc.slices) {
      if (s.endpoints.size > 0 || s.placeholder) keep.push(s);
      else this.deleteSlice(svc, s);
    }
    const hasEndpoints = keep.some((s) => !s.placeholder);
    svc.slices = keep.filter((s) => {
      if (!s.placeholder || !hasEndpoints) return true;
      this.deleteSlice(svc, s);
      return false;
    });
    if (svc.slices.length === 0) {
      const placeholder: SliceState = { name: this.newName(svc.name), family: svc.families[0] ?? 'IPv4', endpoints: new Map(), placeholder: true };
      svc.slices.push(placeholder);
      dirty.add(placeholder);
    }
    for (const s of svc.slices) if (dirty.has(s)) this.writeSlice(svc, s);
  }

  private deleteSlice(svc: ServiceState, slice: SliceState): void {
    this.names.delete(slice.name);
    this.stats.deletes += 1;
    this.sink.deleteEndpointSlice(svc.namespace, slice.name);
  }

  private writeSlice(svc: ServiceState, slice: SliceState): void {
    this.stats.writes += 1;
    this.sink.putControllerSlice({
      metadata: {
        name: slice.name,
        generateName: `${svc.name}-`,
        namespace: svc.namespace,
        labels: { ...svc.labels },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc.name, uid: svc.uid, controller: true, blockOwnerDeletion: true }],
      },
      addressType: slice.family,
      // The real controller's placeholder: `endpoints: null` and no ports. Endpoint objects are
      // shared with the controller's state, which replaces them and never changes them.
      endpoints: slice.placeholder ? null : [...slice.endpoints.values()].map((e) => e.endpoint),
      ...(slice.placeholder ? {} : { ports: svc.ports }),
    });
  }

  private dropService(key: string, svc: ServiceState): void {
    this.indexService(svc, -1);
    this.services.delete(key);
    for (const s of svc.slices) this.deleteSlice(svc, s);
    svc.slices = [];
  }
}
