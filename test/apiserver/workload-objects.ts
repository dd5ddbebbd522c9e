/**
 * The stand-in's Nodes and workloads, for `kubectl conndrain check`: get and list (label
 * selector; no watch, no pagination: every list is one page) of
 *   /api/v1/nodes[/<name>]                                   Nodes
 *   /apis/apps/v1/[namespaces/<ns>/]daemonsets[/<name>]      DaemonSets
 *   /apis/apps/v1/[namespaces/<ns>/]deployments[/<name>]     Deployments
 * Tests put objects with `put` (kind decides the collection) and remove them with `remove`.
 */
import type { IncomingMessage } from 'node:http';
import { matchesLabelSelector } from './selectors.js';
import type { JsonObject } from './server.js';

type Send = (code: number, body: unknown) => void;

const KINDS = {
  Node: { resource: 'nodes', apiVersion: 'v1', namespaced: false },
  DaemonSet: { resource: 'daemonsets', apiVersion: 'apps/v1', namespaced: true },
  Deployment: { resource: 'deployments', apiVersion: 'apps/v1', namespaced: true },
} as const;

export type WorkloadKind = keyof typeof KINDS;

const CORE = /^\/api\/v1\/(nodes)(?:\/([^/]+))?$/;
const APPS = /^\/apis\/apps\/v1\/(?:namespaces\/([^/]+)\/)?(daemonsets|deployments)(?:\/([^/]+))?$/;

function status(code: number, reason: string, message: string): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export class WorkloadObjects {
  private readonly objects = new Map<string, JsonObject>();
  private rv = 5000;

  private key(resource: string, namespace: string | undefined, name: string): string {
    return `${resource}/${namespace ?? ''}/${name}`;
  }

  /** Creates or replaces an object of one of the kinds above (by its `kind`). */
  put(kind: WorkloadKind, object: JsonObject): JsonObject {
    const spec = KINDS[kind];
    const meta = object.metadata ?? {};
    const namespace = spec.namespaced ? (meta.namespace ?? 'default') : undefined;
    this.rv += 1;
    const stored: JsonObject = {
      kind, apiVersion: spec.apiVersion, ...structuredClone(object),
      metadata: { ...structuredClone(meta), ...(namespace === undefined ? {} : { namespace }), resourceVersion: String(this.rv), uid: meta.uid ?? `stand-in-workload-${this.rv}` },
    };
    this.objects.set(this.key(spec.resource, namespace, meta.name ?? ''), stored);
    return stored;
  }

  remove(kind: WorkloadKind, name: string, namespace?: string): boolean {
    const spec = KINDS[kind];
    return this.objects.delete(this.key(spec.resource, spec.namespaced ? (namespace ?? 'default') : undefined, name));
  }

  /** Answers a GET of one of the paths above; false for anything else. */
  handle(req: IncomingMessage, url: URL, send: Send): boolean {
    if (req.method !== 'GET') return false;
    const core = CORE.exec(url.pathname);
    const apps = core === null ? APPS.exec(url.pathname) : null;
    if (core === null && apps === null) return false;
    const resource = core?.[1] ?? apps?.[2] ?? '';
    const namespace = apps?.[1];
    const name = core?.[2] ?? apps?.[3];
    const kind = (Object.keys(KINDS) as WorkloadKind[]).find((k) => KINDS[k].resource === resource) ?? 'Node';
    if (name !== undefined) {
      const found = this.objects.get(this.key(resource, KINDS[kind].namespaced ? namespace : undefined, name));
      if (found === undefined) send(404, status(404, 'NotFound', `${resource} "${name}" not found`));
      else send(200, found);
      return true;
    }
    const labelSelector = url.searchParams.get('labelSelector') ?? undefined;
    const items = [...this.objects.entries()]
      .filter(([key]) => key.startsWith(`${resource}/`))
      .map(([, o]) => o)
      .filter((o) => namespace === undefined || o.metadata?.namespace === namespace)
      .filter((o) => matchesLabelSelector(labelSelector, o.metadata?.labels));
    send(200, { kind: `${kind}List`, apiVersion: KINDS[kind].apiVersion, metadata: { resourceVersion: String(this.rv) }, items });
    return true;
  }
}
