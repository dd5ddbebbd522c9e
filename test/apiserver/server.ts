/**
 * A STAND-IN for the Kubernetes API server: no kube-apiserver, k3s or kind can be installed
 * on these machines (see shared/lab-notes.md), so the agent's watch path is tested against
 * this small HTTP server that speaks the API server's wire format for pods, EndpointSlices
 * (discovery.k8s.io/v1) and events:
 *
 * - LIST  `GET /api/v1/pods?labelSelector=..&fieldSelector=..[&limit=N&continue=T]` (and
 *   `/api/v1/namespaces/<ns>/pods`): a `PodList` with `metadata.resourceVersion` (and `continue`).
 *   With `resourceVersion=0` (or any non-empty resourceVersion and no continue token) it is
 *   served as the real server's watch cache serves it: the current state, whole, `limit`
 *   ignored (kube-apiserver before the cache could paginate, 1.33/1.34); without one (a quorum
 *   read) it paginates. Lists are written item by item (a 150,000-pod list is ~900 MB of
 *   JSON, more than one V8 string can hold) and counted (`listStats`: cache vs etcd reads).
 *   A client that accepts gzip gets a list over 128 KiB gzipped (level 1), as the real server's
 *   APIResponseCompression does (the size judged from the first items); bytes are counted as sent.
 * - the same LIST for `GET /apis/discovery.k8s.io/v1/endpointslices` (and
 *   `/apis/discovery.k8s.io/v1/namespaces/<ns>/endpointslices`): an `EndpointSliceList`; for
 *   `GET /api/v1/services` (and `/api/v1/namespaces/<ns>/services`): a `ServiceList`; for
 *   `GET /api/v1/namespaces` (cluster-scoped): a `NamespaceList`.
 * - WATCH the same paths with `watch=true&resourceVersion=N[&allowWatchBookmarks=true][&timeoutSeconds=S]`:
 *   HTTP 200, chunked, one JSON event per line (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`),
 *   replaying every change after N; a compacted N gets an `ERROR` event carrying a 410 `Status`
 *   (reason `Expired`) and the stream ends, as the real server does. With no resourceVersion
 *   (or `0`) it starts with a synthetic ADDED per current object, as the real server does.
 *   With a selector, an object that starts matching it arrives as ADDED and one that stops
 *   matching as DELETED (its previous state at the new resourceVersion), as the real server's
 *   watch cache sends them (a pod whose spec.nodeName changes under a node's fieldSelector).
 * - A WATCH of EndpointSlices whose `Accept` header includes `application/vnd.kubernetes.protobuf`
 *   (as a kube-proxy's, `--kube-api-content-type`) is answered in protobuf, as the real server
 *   answers it: `Content-Type: application/vnd.kubernetes.protobuf;stream=watch`, every event
 *   (ADDED, MODIFIED, DELETED, BOOKMARK, the streaming list's initial events and end bookmark,
 *   ERROR with its Status) a frame: a 4-byte big-endian length, then a WatchEvent whose object is
 *   `k8s\0` + runtime.Unknown {EndpointSlice or Status} (protobuf.ts). Bytes are counted as the
 *   frames sent. A LIST of EndpointSlices with that Accept is answered in protobuf too
 *   (`Content-Type: application/vnd.kubernetes.protobuf`, `k8s\0` + runtime.Unknown
 *   {EndpointSliceList}), gzipped as a JSON list is. Only slices are encoded: other resources,
 *   clients without that Accept, and GETs stay JSON.
 * - The streaming list (KEP-3157): a WATCH with `sendInitialEvents=true&resourceVersionMatch=NotOlderThan`
 *   (and `allowWatchBookmarks=true`) sends one ADDED per current object (written with
 *   backpressure; live changes meanwhile are queued), then a BOOKMARK at the state's
 *   resourceVersion annotated `k8s.io/initial-events-end: "true"`, then the live events. Its
 *   `resourceVersion` is taken as a lower bound and the current state served (the real server
 *   waits for its cache to reach it). `watchList` says how the server treats it: `on` (1.32,
 *   1.34+), `off` (the gate off: 1.27-1.31, and 1.33 by default) answers HTTP 422 `Invalid`
 *   with the real server's message, `ignored` (a server or proxy that drops the parameters)
 *   serves a plain watch. `resourceVersionMatch` on a watch without `sendInitialEvents` is a 422
 *   as on the real server. Counted in `listStats.streamed`; `failNext(.., 'list')` matches it.
 * - GET of one object (`/api/v1/namespaces/<ns>/pods/<name>`, `.../services/<name>`,
 *   `/api/v1/namespaces/<name>`, `.../endpointslices/<name>`), `POST /api/v1/namespaces/<ns>/events` (recorded).
 * - Secrets and MutatingWebhookConfigurations: get, create, replace, JSON patch (plain-objects.ts).
 * - TokenReviews and SubjectAccessReviews (reviews.ts); Nodes, DaemonSets and Deployments:
 *   get and list (workload-objects.ts).
 *
 * Tests program it directly (`putPod`, `deletePod`, `putEndpointSlice`, `deleteEndpointSlice`,
 * `putNamespace`, `deleteNamespace`, `putService`, `deleteService`, `expireResourceVersions`,
 * `dropWatches`, `failNext`); other processes (the lab) can do the same through
 * `/stand-in/...` (control.ts). While a Service with a selector exists, an EndpointSlice
 * controller (endpointslice-controller.ts) keeps its slices from the pods, as Kubernetes' does.
 * Bytes written to clients are counted by resource and client (`bytesSent`, byte-stats.ts).
 * It is plain http on 127.0.0.1: `writeKubeconfig` writes a kubeconfig pointing at it. `listenTls`
 * adds an HTTPS listener (same API, same state) for a client that should pay for TLS as it does
 * against a real API server (bench/scale's agent).
 * Label and field selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (..)`, `a notin (..)`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { constants as zlibConstants, createGzip } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { matchesFieldSelector, matchesLabelSelector } from './selectors.js';
import { handleControl } from './control.js';
import { collectionOf, itemOf, keyOf, RESOURCE_NAMES, RESOURCES, type Resource } from './resources.js';
import { PlainObjects } from './plain-objects.js';
import { AccessReviews } from './reviews.js';
import { WorkloadObjects } from './workload-objects.js';
import { ByteStats, type ByteCounts, type ByteStatsSnapshot } from './byte-stats.js';
import { EndpointSliceController } from './endpointslice-controller.js';
import { namespaceObject, serviceObject } from './cluster-objects.js';
import { encodeEndpointSlice, encodeList, encodeStatus, envelope, watchFrame } from './protobuf.js';

export type JsonObject = Record<string, unknown> & {
  metadata?: Record<string, unknown> & { name?: string; namespace?: string; resourceVersion?: string; uid?: string; labels?: Record<string, string> };
};

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface HistoryEntry {
  resource: Resource;
  rv: number;
  type: WatchEventType;
  object: JsonObject;
  /** A MODIFIED's state before: a selector watch sees ADDED/DELETED when matching changes. */
  previous?: JsonObject | undefined;
}

interface OpenWatch {
  resource: Resource;
  res: ServerResponse;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  namespace: string | undefined;
  bookmarks: boolean;
  timer: NodeJS.Timeout | undefined;
  /** This client's byte counters for this resource. */
  counts: ByteCounts;
  client: string;
  /** Bytes written on this watch (initial events included). */
  bytes: number;
  /** A slice watch whose client accepts protobuf: events go as protobuf frames (protobuf.ts), not JSON lines. */
  protobuf: boolean;
  /** While a streaming list writes its initial events: live events queued behind them. */
  pending?: Array<{ type: WatchEventType; object: JsonObject }> | undefined;
}

/** How the stand-in treats `sendInitialEvents=true` (see the header). */
export type WatchListSupport = 'on' | 'off' | 'ignored';

export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

function status(code: number, reason: string, message: string): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** A list body larger than this goes gzipped to a client that accepts gzip (kube-apiserver's threshold). */
const COMPRESS_ABOVE_BYTES = 128 * 1024;

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export class FakeApiServer {
  private readonly server: Server;
  private readonly extraServers: Array<Server | HttpsServer> = [];
  private readonly stores = Object.fromEntries(RESOURCE_NAMES.map((r) => [r, new Map<string, JsonObject>()])) as Record<Resource, Map<string, JsonObject>>;
  private readonly pods = this.stores.pods;
  private readonly slices = this.stores.endpointslices;
  /** Keeps the slices of Services with a selector (idle until the first Service). */
  readonly sliceController = new EndpointSliceController(this);
  private readonly byteStats = new ByteStats();
  /** A slice event's protobuf frame, by object (events share the stored object), resourceVersion and type: one per event, whoever watches. */
  private readonly protobufObjects = new WeakMap<JsonObject, { rv: string | undefined; type: string; frame: Buffer }>();
  /** A listed slice's message, by object and resourceVersion. */
  private readonly protobufMessages = new WeakMap<JsonObject, { rv: string | undefined; message: Buffer }>();
  private clusterIpSeq = 0;
  private readonly history: HistoryEntry[] = [];
  private readonly watches = new Set<OpenWatch>();
  private rv = 100;
  /** Watches from a resourceVersion below this get 410 Gone. */
  private compactedRv = 0;
  private failures: Array<{ status: number; match: 'list' | 'watch' | 'any' }> = [];
  /** Secrets and MutatingWebhookConfigurations (plain-objects.ts). */
  readonly plain = new PlainObjects();
  /** TokenReviews and SubjectAccessReviews (reviews.ts). */
  readonly reviews = new AccessReviews();
  /** Nodes, DaemonSets, Deployments: get and list (workload-objects.ts). */
  readonly workloads = new WorkloadObjects();
  /** Every Event the clients created, in order. */
  readonly events: JsonObject[] = [];
  /**
   * Lists served from the "watch cache" (resourceVersion set), from "etcd" (quorum reads), as
   * streaming lists (`sendInitialEvents`), streaming lists refused (gate off), and list bytes
   * sent (list bodies and initial events).
   */
  readonly listStats = { fromCache: 0, quorum: 0, streamed: 0, refused: 0, bytes: 0 };
  /** Whether `sendInitialEvents=true` is served (`on`, as 1.34), refused (`off`, as 1.33) or ignored. */
  watchList: WatchListSupport = 'on';
  /** Tests: streaming lists write their initial events but hold the end bookmark until `releaseInitialEventsEnd()`. */
  holdInitialEventsEnd = false;
  private readonly heldEnds: Array<() => void> = [];
  /**
   * Applied to every pod as it is written to a client (lists and watch events): the bench
   * stores small pods and sends them full size (~6 KB: managedFields, containers...), as the
   * real server does, without holding 150,000 full objects in this process.
   */
  expand: ((object: JsonObject) => JsonObject) | undefined;
  /** Every request, for assertions on how the client behaved (relists, bookmarks asked for). */
  readonly requests: RecordedRequest[] = [];
  url = '';

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /**
   * Also serves on a unix socket (same API, same state): a process in another network
   * namespace reaches it through a relay (test/agent/relay.mjs), as no TCP address is shared.
   */
  async listenUnix(path: string): Promise<void> {
    const extra = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => extra.listen(path, resolve));
    this.extraServers.push(extra);
  }

  /** Also serves over HTTPS with `pair` on a port of its own; returns its URL (the plain one stays `url`). */
  async listenTls(pair: { cert: string; key: string }): Promise<string> {
    const extra = createHttpsServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => extra.listen(0, '127.0.0.1', resolve));
    this.extraServers.push(extra);
    return `https://127.0.0.1:${(extra.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.dropWatches();
    for (const s of [this.server, ...this.extraServers]) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  }

  /**
   * A kubeconfig for this server (plain http, a dummy token); `url` when reached through a relay.
   * With `tls` (an HTTPS listener's URL): its certificate as the CA and the name it carries.
   */
  writeKubeconfig(path: string, url = this.url, tls?: { ca: string; serverName: string }): string {
    const cluster =
      tls === undefined
        ? // client-node refuses plain http unless TLS verification is off; there is no TLS here at all.
          `{server: "${url}", insecure-skip-tls-verify: true}`
        : `{server: "${url}", certificate-authority-data: ${Buffer.from(tls.ca).toString('base64')}, tls-server-name: ${tls.serverName}}`;
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: stand-in',
      `  cluster: ${cluster}`,
      'users:',
      '- name: stand-in',
      '  user: {token: stand-in-token}',
      'contexts:',
      '- name: stand-in',
      '  context: {cluster: stand-in, user: stand-in}',
      'current-context: stand-in',
      '',
    ].join('\n');
    writeFileSync(path, text);
    return path;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  listPods(): JsonObject[] {
    return [...this.pods.values()];
  }

  getPod(namespace: string, name: string): JsonObject | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  /** Creates or replaces a pod (ADDED or MODIFIED); fills uid (a UUID, as the real server's), resourceVersion, creationTimestamp. */
  putPod(pod: JsonObject): JsonObject {
    const { stored, previous } = this.putObject('pods', pod);
    this.sliceController.podChanged(previous, stored);
    return stored;
  }

  /** Creates or replaces an EndpointSlice (discovery.k8s.io/v1; ADDED or MODIFIED). */
  putEndpointSlice(slice: JsonObject): JsonObject {
    return this.putObject('endpointslices', slice).stored;
  }

  /**
   * The EndpointSlice controller's write: `slice` is built fresh for each write and never
   * changed after, so it is stored without the copy `putEndpointSlice` makes (a slice of 100
   * endpoints per pod event was most of the cost of the controller).
   */
  putControllerSlice(slice: JsonObject): JsonObject {
    return this.putObject('endpointslices', slice, true).stored;
  }

  /** Removes an EndpointSlice (DELETED). */
  deleteEndpointSlice(namespace: string, name: string): boolean {
    return this.deleteObject('endpointslices', namespace, name);
  }

  listEndpointSlices(): JsonObject[] {
    return [...this.slices.values()];
  }

  /**
   * Creates or replaces a Namespace (cluster-scoped; ADDED or MODIFIED) with `labels` and the
   * `kubernetes.io/metadata.name` label the real server adds.
   */
  putNamespace(name: string, labels: Record<string, string> = {}): JsonObject {
    return this.putObject('namespaces', namespaceObject(name, labels)).stored;
  }

  deleteNamespace(name: string): boolean {
    return this.deleteObject('namespaces', undefined, name);
  }

  listNamespaces(): JsonObject[] {
    return [...this.stores.namespaces.values()];
  }

  /**
   * Creates or replaces a Service (ADDED or MODIFIED): a clusterIP is allocated when it has
   * none (`None` keeps it headless), kept on replace. Its EndpointSlices follow at once.
   */
  putService(service: JsonObject): JsonObject {
    const meta = service.metadata ?? {};
    const existing = this.stores.services.get(keyOf('services', meta.namespace, meta.name ?? ''));
    const { stored, previous } = this.putObject('services', serviceObject(service, existing, () => ++this.clusterIpSeq));
    this.sliceController.serviceChanged(previous, stored);
    return stored;
  }

  /** Removes a Service (DELETED) and, as the garbage collector would, its controller's slices. */
  deleteService(namespace: string, name: string): boolean {
    const existing = this.stores.services.get(keyOf('services', namespace, name));
    if (!this.deleteObject('services', namespace, name) || existing === undefined) return false;
    this.sliceController.serviceChanged(existing, undefined);
    return true;
  }

  listServices(): JsonObject[] {
    return [...this.stores.services.values()];
  }

  getService(namespace: string, name: string): JsonObject | undefined {
    return this.stores.services.get(keyOf('services', namespace, name));
  }

  /** Bytes written to clients so far, by resource and by client (`User-Agent`; byte-stats.ts). */
  bytesSent(): ByteStatsSnapshot {
    return this.byteStats.snapshot();
  }

  resetBytesSent(): void {
    this.byteStats.reset();
  }

  /** Every open watch: what it watches, its client (`User-Agent`) and the bytes written on it so far. */
  openWatchStats(): Array<{ resource: Resource; client: string; namespace?: string; labelSelector?: string; fieldSelector?: string; bytes: number }> {
    return [...this.watches].map((w) => ({
      resource: w.resource,
      client: w.client,
      ...(w.namespace === undefined ? {} : { namespace: w.namespace }),
      ...(w.labelSelector === undefined ? {} : { labelSelector: w.labelSelector }),
      ...(w.fieldSelector === undefined ? {} : { fieldSelector: w.fieldSelector }),
      bytes: w.bytes,
    }));
  }

  private store(resource: Resource): Map<string, JsonObject> {
    return this.stores[resource];
  }

  /** Stores a copy of `object` (as is when `owned`: the caller hands it over). */
  private putObject(resource: Resource, object: JsonObject, owned = false): { stored: JsonObject; previous: JsonObject | undefined } {
    const meta = object.metadata ?? {};
    const { namespaced, kind, apiVersion } = RESOURCES[resource];
    const key = keyOf(resource, meta.namespace, meta.name ?? '');
    const store = this.store(resource);
    const existing = store.get(key);
    this.rv += 1;
    const metadata: JsonObject['metadata'] & object = {
      ...(namespaced ? { namespace: 'default' } : {}),
      creationTimestamp: new Date().toISOString(),
      ...(owned ? meta : structuredClone(meta)),
      uid: meta.uid ?? (existing?.metadata?.uid) ?? randomUUID(),
      resourceVersion: String(this.rv),
    };
    if (!namespaced) delete metadata.namespace;
    const stored: JsonObject = { kind, apiVersion, ...(owned ? object : structuredClone(object)), metadata };
    store.set(key, stored);
    this.publish({ resource, rv: this.rv, type: existing === undefined ? 'ADDED' : 'MODIFIED', object: stored, previous: existing });
    return { stored, previous: existing };
  }

  private deleteObject(resource: Resource, namespace: string | undefined, name: string): boolean {
    const key = keyOf(resource, namespace, name);
    const store = this.store(resource);
    const existing = store.get(key);
    if (existing === undefined) return false;
    store.delete(key);
    this.rv += 1;
    const object: JsonObject = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(this.rv) } };
    this.publish({ resource, rv: this.rv, type: 'DELETED', object });
    return true;
  }

  /** Applies `change` to a copy of the stored pod and stores it (MODIFIED). */
  modifyPod(namespace: string, name: string, change: (pod: JsonObject) => void): JsonObject {
    const existing = this.pods.get(`${namespace}/${name}`);
    if (existing === undefined) throw new Error(`stand-in: no pod ${namespace}/${name}`);
    const copy = structuredClone(existing);
    change(copy);
    return this.putPod(copy);
  }

  /** Removes a pod (DELETED, carrying the last state with a new resourceVersion). */
  deletePod(namespace: string, name: string): boolean {
    const existing = this.pods.get(`${namespace}/${name}`);
    if (!this.deleteObject('pods', namespace, name)) return false;
    this.sliceController.podChanged(existing, undefined);
    return true;
  }

  /**
   * Compacts history: every resourceVersion handed out so far is too old to watch from. Open
   * watches get an ERROR event with a 410 Status and end, so clients must relist.
   */
  expireResourceVersions(): void {
    this.compactedRv = this.rv + 1;
    this.history.length = 0;
    for (const w of [...this.watches]) this.endWatch(w, status(410, 'Expired', `too old resource version: ${this.rv} (${this.compactedRv})`));
  }

  /** Ends every open watch abruptly (connection reset), as a restarting API server or LB would. */
  dropWatches(): void {
    for (const w of [...this.watches]) {
      if (w.timer !== undefined) clearTimeout(w.timer);
      this.watches.delete(w);
      w.res.socket?.destroy();
    }
  }

  /** Sends a BOOKMARK (current resourceVersion) to every watch that asked for bookmarks (past its initial events). */
  sendBookmarks(): void {
    for (const w of this.watches) {
      if (!w.bookmarks || w.pending !== undefined) continue;
      this.writeEvent(w, 'BOOKMARK', { kind: RESOURCES[w.resource].kind, apiVersion: RESOURCES[w.resource].apiVersion, metadata: { resourceVersion: String(this.rv) } });
    }
  }

  /** Sends the end bookmarks held by `holdInitialEventsEnd` (and stops holding). */
  releaseInitialEventsEnd(): void {
    this.holdInitialEventsEnd = false;
    for (const end of this.heldEnds.splice(0)) end();
  }

  /** The next `count` matching requests answer `statusCode` with a Status body. */
  failNext(count: number, statusCode = 500, match: 'list' | 'watch' | 'any' = 'any'): void {
    for (let i = 0; i < count; i++) this.failures.push({ status: statusCode, match });
  }

  /** Forgets failures `failNext` queued and no request took. */
  clearFailures(): void {
    this.failures.length = 0;
  }

  get openWatches(): number {
    return this.watches.size;
  }

  /**
   * A stalled watch: the connections stay open and silent (no event, no error) while changes go
   * on, as behind a stuck proxy or an overloaded server. `stallWatches(false)` ends the stalled
   * watches, so their clients watch again from their last resourceVersion and get the replay.
   */
  stallWatches(on: boolean): void {
    this.stalled = on;
    if (!on) this.dropWatches();
  }

  private stalled = false;

  private publish(entry: HistoryEntry): void {
    this.history.push(entry);
    if (this.history.length > 10_000) this.history.shift();
    if (this.stalled) return;
    for (const w of this.watches) {
      if (w.resource !== entry.resource) continue;
      const seen = this.seenAs(w, entry);
      if (seen === undefined) continue;
      if (w.pending !== undefined) w.pending.push(seen);
      else this.writeEvent(w, seen.type, seen.object);
    }
  }

  /**
   * How a watch with selectors sees a change (the real watch cache's rule): a MODIFIED that
   * starts matching is an ADDED; one that stops matching a DELETED carrying the previous state
   * at the new resourceVersion; undefined when the watch sees nothing.
   */
  private seenAs(w: { labelSelector: string | undefined; fieldSelector: string | undefined; namespace: string | undefined }, entry: HistoryEntry): { type: WatchEventType; object: JsonObject } | undefined {
    const now = this.visible(w, entry.object);
    if (entry.type !== 'MODIFIED' || entry.previous === undefined) return now ? { type: entry.type, object: entry.object } : undefined;
    const before = this.visible(w, entry.previous);
    if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: entry.object };
    if (!before) return undefined;
    return { type: 'DELETED', object: { ...entry.previous, metadata: { ...entry.previous.metadata, resourceVersion: String(entry.rv) } } };
  }

  private visible(w: { labelSelector: string | undefined; fieldSelector: string | undefined; namespace: string | undefined }, object: JsonObject): boolean {
    if (w.namespace !== undefined && object.metadata?.namespace !== w.namespace) return false;
    return matchesLabelSelector(w.labelSelector, object.metadata?.labels) && matchesFieldSelector(w.fieldSelector, object);
  }

  /** A pod as written to a client: expanded when `expand` is set; other objects as stored. */
  private outgoing(resource: Resource, object: JsonObject): JsonObject {
    return this.expand === undefined || resource !== 'pods' ? object : this.expand(object);
  }

  /** One watch event's line; pods are expanded (`expand`), bookmarks and Status objects are not. */
  private eventLine(resource: Resource, type: string, object: JsonObject): string {
    const full = type === 'BOOKMARK' || type === 'ERROR' ? object : this.outgoing(resource, object);
    return `${JSON.stringify({ type, object: full })}\n`;
  }

  /**
   * One watch event as `w` gets it: its JSON line, or on a protobuf watch (slices only) its
   * frame, the object an EndpointSlice (a bookmark's: only metadata) or, for ERROR, a Status.
   */
  private eventData(w: OpenWatch, type: string, object: JsonObject): string | Buffer {
    if (!w.protobuf) return this.eventLine(w.resource, type, object);
    if (type === 'ERROR') return watchFrame(type, envelope('v1', 'Status', encodeStatus(object)));
    // Encoded once per object and resourceVersion, whoever watches it (the encoder is slow: it
    // checks every field, and a bench's stand-in must not lag behind the clients it measures).
    const rv = object.metadata?.resourceVersion;
    const cached = this.protobufObjects.get(object);
    if (cached !== undefined && cached.rv === rv && cached.type === type) return cached.frame;
    const frame = watchFrame(type, envelope('discovery.k8s.io/v1', 'EndpointSlice', encodeEndpointSlice(object)));
    this.protobufObjects.set(object, { rv, type, frame });
    return frame;
  }

  private writeEvent(w: OpenWatch, type: string, object: JsonObject): boolean {
    const data = this.eventData(w, type, object);
    const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    w.counts.watch += bytes;
    w.bytes += bytes;
    return w.res.write(data);
  }

  private endWatch(w: OpenWatch, error?: JsonObject): void {
    if (w.timer !== undefined) clearTimeout(w.timer);
    this.watches.delete(w);
    if (error !== undefined) this.writeEvent(w, 'ERROR', error);
    w.res.end();
  }

  private takeFailure(kind: 'list' | 'watch' | 'other'): number | undefined {
    const index = this.failures.findIndex((f) => f.match === 'any' || f.match === kind);
    if (index < 0) return undefined;
    const [failure] = this.failures.splice(index, 1);
    return failure?.status;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const query = Object.fromEntries(url.searchParams.entries());
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query });
    const send = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname.startsWith('/stand-in/')) {
      handleControl(this, req, url, send);
      return;
    }
    const collection = collectionOf(url.pathname);
    const item = itemOf(url.pathname);
    const eventsPath = /^\/api\/v1\/namespaces\/([^/]+)\/events$/.exec(url.pathname);
    const isWatch = query.watch === 'true' || query.watch === '1';
    const streamingList = isWatch && query.sendInitialEvents === 'true';
    const failure = this.takeFailure(collection !== undefined ? (isWatch && !streamingList ? 'watch' : 'list') : 'other');
    if (failure !== undefined) {
      send(failure, status(failure, 'InternalError', 'stand-in: injected failure'));
      return;
    }
    if (collection !== undefined && req.method === 'GET') {
      const client = req.headers['user-agent'] ?? '-';
      const counts = this.byteStats.counts(client, collection.resource);
      const protobuf = collection.resource === 'endpointslices' && String(req.headers.accept ?? '').includes(PROTOBUF);
      if (isWatch) this.serveWatch(res, send, collection.resource, collection.namespace, query, { counts, client, protobuf });
      else this.serveList(res, send, collection.resource, collection.namespace, query, counts, { acceptsGzip: /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')), protobuf });
      return;
    }
    if (item !== undefined && req.method === 'GET') {
      const object = this.store(item.resource).get(keyOf(item.resource, item.namespace, item.name));
      if (object === undefined) send(404, status(404, 'NotFound', `${item.resource} "${item.name}" not found`));
      else send(200, object);
      return;
    }
    if (eventsPath !== null && req.method === 'POST') {
      this.readJson(req, (body) => {
        if (body === undefined) {
          send(400, status(400, 'BadRequest', 'stand-in: body is not JSON'));
          return;
        }
        this.rv += 1;
        const event: JsonObject = { kind: 'Event', apiVersion: 'v1', ...body, metadata: { ...body.metadata, namespace: eventsPath[1], resourceVersion: String(this.rv), uid: `stand-in-event-${this.rv}` } };
        this.events.push(event);
        send(201, event);
      });
      return;
    }
    if (this.plain.handle(req, url.pathname, send, (then) => this.readJson(req, then))) return;
    if (this.reviews.handle(req, url.pathname, send, (then) => this.readJson(req, then))) return;
    if (this.workloads.handle(req, url, send)) return;
    send(404, status(404, 'NotFound', `stand-in: no route ${req.method ?? ''} ${url.pathname}`));
  }

  readJson(req: IncomingMessage, then: (body: JsonObject | undefined) => void): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        then(JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject);
      } catch {
        then(undefined);
      }
    });
  }

  /**
   * From the cache (a non-empty resourceVersion, no continue token): everything, `limit`
   * ignored. Otherwise `limit`/`continue` paginate as the API server does, with one
   * simplification: a continue token is an offset into the current list (the real server
   * serves the pages from one snapshot); a token older than a compaction gets 410 Expired.
   */
  private serveList(res: ServerResponse, send: (code: number, body: unknown) => void, resource: Resource, namespace: string | undefined, query: Record<string, string>, counts: ByteCounts, { acceptsGzip, protobuf }: { acceptsGzip: boolean; protobuf: boolean }): void {
    const filter = { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector, namespace };
    const all = [...this.store(resource).values()].filter((p) => this.visible(filter, p));
    let offset = 0;
    let rv = this.rv;
    const hasContinue = query.continue !== undefined && query.continue !== '';
    const fromCache = !hasContinue && query.resourceVersion !== undefined && query.resourceVersion !== '';
    if (hasContinue) {
      const [tokenRv, tokenOffset] = Buffer.from(query.continue ?? '', 'base64url').toString().split(':').map(Number);
      if (tokenRv === undefined || tokenOffset === undefined || !Number.isFinite(tokenRv) || tokenRv < this.compactedRv) {
        send(410, status(410, 'Expired', 'stand-in: the continue token has expired'));
        return;
      }
      offset = tokenOffset;
      rv = tokenRv;
    }
    if (fromCache) this.listStats.fromCache += 1;
    else if (!hasContinue) this.listStats.quorum += 1;
    const limit = Number(query.limit);
    const end = !fromCache && Number.isFinite(limit) && limit > 0 ? Math.min(all.length, offset + limit) : all.length;
    const metadata: Record<string, string> = { resourceVersion: String(rv) };
    if (end < all.length) metadata.continue = Buffer.from(`${rv}:${end}`).toString('base64url');
    const items = all.slice(offset, end);
    counts.lists += 1;
    if (protobuf) {
      this.sendProtobufList(res, resource, metadata, items, counts, acceptsGzip);
      return;
    }
    const head = `{"kind":${JSON.stringify(RESOURCES[resource].listKind)},"apiVersion":${JSON.stringify(RESOURCES[resource].apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[`;
    const sample = items.slice(0, 16).reduce((n, item) => n + Buffer.byteLength(JSON.stringify(this.outgoing(resource, item))), 0);
    const gzip = acceptsGzip && head.length + (sample / Math.max(1, Math.min(16, items.length))) * items.length > COMPRESS_ABOVE_BYTES
      ? createGzip({ level: 1, flush: zlibConstants.Z_NO_FLUSH })
      : undefined;
    res.writeHead(200, { 'content-type': 'application/json', ...(gzip === undefined ? {} : { 'content-encoding': 'gzip' }) });
    const countSent = (bytes: number): void => {
      this.listStats.bytes += bytes;
      counts.list += bytes;
    };
    if (gzip !== undefined) {
      gzip.on('data', (c: Buffer) => countSent(c.length));
      gzip.pipe(res);
    }
    const out = gzip ?? res;
    let i = 0;
    const write = (text: string): boolean => {
      if (gzip === undefined) countSent(Buffer.byteLength(text));
      return out.write(text);
    };
    const pump = (): void => {
      let ok = true;
      while (ok && i < items.length) {
        const batch: string[] = [];
        for (let k = 0; k < 64 && i < items.length; k++, i++) {
          const item = items[i] as JsonObject;
          batch.push(JSON.stringify(this.outgoing(resource, item)));
        }
        ok = write((i - batch.length === 0 ? '' : ',') + batch.join(','));
      }
      if (i < items.length) out.once('drain', pump);
      else {
        write(']}');
        out.end();
      }
    };
    write(head);
    pump();
  }

  /**
   * A slice list in protobuf (`encodeList`: `k8s\0` + Unknown {EndpointSliceList}), gzipped as a
   * JSON list is when it is larger than the server's threshold and the client accepts gzip.
   */
  private sendProtobufList(res: ServerResponse, resource: Resource, metadata: Record<string, string>, items: readonly JsonObject[], counts: ByteCounts, acceptsGzip: boolean): void {
    const body = encodeList(RESOURCES[resource].apiVersion, RESOURCES[resource].listKind, metadata, items.map((item) => this.sliceMessage(item)));
    const countSent = (bytes: number): void => {
      this.listStats.bytes += bytes;
      counts.list += bytes;
    };
    const gzip = acceptsGzip && body.length > COMPRESS_ABOVE_BYTES ? createGzip({ level: 1 }) : undefined;
    res.writeHead(200, { 'content-type': PROTOBUF, ...(gzip === undefined ? {} : { 'content-encoding': 'gzip' }) });
    if (gzip === undefined) {
      countSent(body.length);
      res.end(body);
      return;
    }
    gzip.on('data', (c: Buffer) => countSent(c.length));
    gzip.pipe(res);
    gzip.end(body);
  }

  /** A slice's EndpointSlice message, encoded once per object and resourceVersion (lists share it, whoever lists). */
  private sliceMessage(object: JsonObject): Buffer {
    const rv = object.metadata?.resourceVersion;
    const cached = this.protobufMessages.get(object);
    if (cached !== undefined && cached.rv === rv) return cached.message;
    const message = encodeEndpointSlice(object);
    this.protobufMessages.set(object, { rv, message });
    return message;
  }

  /** The real server's 422 for a watch's options it does not accept (`field`: the offending option). */
  private invalidWatch(send: (code: number, body: unknown) => void, field: string, why: string): void {
    send(422, {
      ...status(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: ${field}: Forbidden: ${why}`),
      details: { group: 'meta.k8s.io', kind: 'ListOptions', causes: [{ reason: 'FieldValueForbidden', message: `Forbidden: ${why}`, field }] },
    });
  }

  /** Validates a watch's streaming-list options as the real server does; false when it answered 422. */
  private acceptWatchOptions(send: (code: number, body: unknown) => void, query: Record<string, string>): boolean {
    if (this.watchList === 'ignored') return true;
    const match = query.resourceVersionMatch;
    if (query.sendInitialEvents !== undefined) {
      if (match !== 'NotOlderThan') this.invalidWatch(send, 'resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
      else if (this.watchList === 'off') this.invalidWatch(send, 'sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
      else if (query.allowWatchBookmarks !== 'true') this.invalidWatch(send, 'allowWatchBookmarks', 'stand-in: sendInitialEvents needs allowWatchBookmarks=true (its end is a bookmark)');
      else return true;
      if (this.watchList === 'off') this.listStats.refused += 1;
      return false;
    }
    if (match !== undefined && match !== '') {
      this.invalidWatch(send, 'resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
      return false;
    }
    return true;
  }

  private serveWatch(res: ServerResponse, send: (code: number, body: unknown) => void, resource: Resource, namespace: string | undefined, query: Record<string, string>, { counts, client, protobuf }: { counts: ByteCounts; client: string; protobuf: boolean }): void {
    if (!this.acceptWatchOptions(send, query)) return;
    const streamingList = query.sendInitialEvents === 'true' && this.watchList !== 'ignored';
    const noRv = query.resourceVersion === undefined || query.resourceVersion === '';
    const from = noRv ? 0 : Number(query.resourceVersion);
    res.writeHead(200, { 'content-type': protobuf ? `${PROTOBUF};stream=watch` : 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: OpenWatch = {
      resource,
      res,
      labelSelector: query.labelSelector,
      fieldSelector: query.fieldSelector,
      namespace,
      bookmarks: query.allowWatchBookmarks === 'true',
      timer: undefined,
      counts,
      client,
      bytes: 0,
      protobuf,
    };
    counts.watches += 1;
    if (!Number.isFinite(from) || (!streamingList && from !== 0 && from < this.compactedRv)) {
      this.writeEvent(w, 'ERROR', status(410, 'Expired', `too old resource version: ${String(query.resourceVersion)} (${this.compactedRv})`));
      res.end();
      return;
    }
    if (streamingList) {
      this.serveInitialEvents(w);
    } else if (from === 0) {
      for (const object of this.store(resource).values()) if (this.visible(w, object)) this.writeEvent(w, 'ADDED', object);
    } else {
      for (const entry of this.history) {
        if (entry.resource !== resource || entry.rv <= from) continue;
        const seen = this.seenAs(w, entry);
        if (seen !== undefined) this.writeEvent(w, seen.type, seen.object);
      }
    }
    this.watches.add(w);
    const timeout = Number(query.timeoutSeconds);
    if (Number.isFinite(timeout) && timeout > 0) w.timer = setTimeout(() => this.endWatch(w), timeout * 1000);
    res.on('close', () => {
      if (w.timer !== undefined) clearTimeout(w.timer);
      this.watches.delete(w);
    });
  }

  /**
   * A streaming list's initial events: the current state as ADDED events, written with
   * backpressure, then the end bookmark, then what changed meanwhile (queued in `pending`).
   */
  private serveInitialEvents(w: OpenWatch): void {
    const snapshot = [...this.store(w.resource).values()].filter((o) => this.visible(w, o));
    const rv = this.rv;
    this.listStats.streamed += 1;
    w.counts.lists += 1;
    w.pending = [];
    let i = 0;
    const pump = (): void => {
      if (w.res.destroyed || w.res.writableEnded) return;
      let ok = true;
      while (ok && i < snapshot.length) {
        let text = '';
        const frames: Buffer[] = [];
        for (let k = 0; k < 64 && i < snapshot.length; k++, i++) {
          const data = this.eventData(w, 'ADDED', snapshot[i] as JsonObject);
          if (typeof data === 'string') text += data;
          else frames.push(data);
        }
        const chunk = w.protobuf ? Buffer.concat(frames) : text;
        const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        this.listStats.bytes += bytes;
        w.counts.list += bytes;
        w.bytes += bytes;
        ok = w.res.write(chunk);
      }
      if (i < snapshot.length) {
        w.res.once('drain', pump);
        return;
      }
      if (this.holdInitialEventsEnd) this.heldEnds.push(end);
      else end();
    };
    const end = (): void => {
      if (w.res.destroyed || w.res.writableEnded) return;
      const { kind, apiVersion } = RESOURCES[w.resource];
      this.writeEvent(w, 'BOOKMARK', { kind, apiVersion, metadata: { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END]: 'true' } } });
      const queued = w.pending ?? [];
      w.pending = undefined;
      for (const e of queued) this.writeEvent(w, e.type, e.object);
    };
    pump();
  }
}
