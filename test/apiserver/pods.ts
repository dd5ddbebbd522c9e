/** Builders of managed pods for tests, the lab and the benchmark (the shape the webhook leaves). */
import { ANNOTATION_DRAIN, ANNOTATION_DRAIN_ID, ANNOTATION_MIN_DRAIN, LABEL_MANAGED, LABEL_MANAGED_VALUE } from '../../src/contract.js';
import type { JsonObject } from './server.js';

export interface ManagedPodOptions {
  name: string;
  namespace?: string;
  nodeName: string;
  ips: string[];
  ready?: boolean;
  drainId?: string;
  drain?: string;
  minDrain?: string;
  uid?: string;
  /** The `app` label, what a Service of the workload selects (default `shop`). */
  app?: string;
  /** More labels (over `app` and the managed label). */
  labels?: Record<string, string>;
  /** A host-network pod: its IPs are its node's. */
  hostNetwork?: boolean;
}

export function managedPod(o: ManagedPodOptions): JsonObject {
  const annotations: Record<string, string> = { [ANNOTATION_DRAIN]: o.drain ?? '30s', [ANNOTATION_DRAIN_ID]: o.drainId ?? `drain-${o.name}` };
  if (o.minDrain !== undefined) annotations[ANNOTATION_MIN_DRAIN] = o.minDrain;
  return {
    metadata: {
      name: o.name,
      namespace: o.namespace ?? 'shop',
      ...(o.uid === undefined ? {} : { uid: o.uid }),
      labels: { app: o.app ?? 'shop', [LABEL_MANAGED]: LABEL_MANAGED_VALUE, ...o.labels },
      annotations,
    },
    spec: {
      nodeName: o.nodeName,
      ...(o.hostNetwork === true ? { hostNetwork: true } : {}),
      terminationGracePeriodSeconds: 40,
      containers: [{ name: 'app', image: 'registry.example/shop:1' }],
    },
    status: {
      phase: 'Running',
      podIP: o.ips[0],
      podIPs: o.ips.map((ip) => ({ ip })),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

export function setReady(pod: JsonObject, ready: boolean): void {
  const status = pod.status as { conditions?: Array<{ type: string; status: string }> };
  status.conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
}

/** What the API server does on a graceful delete: deletionTimestamp = now + grace. */
export function markDeleting(pod: JsonObject, graceSeconds: number, nowMs = Date.now()): void {
  const meta = pod.metadata as Record<string, unknown>;
  meta.deletionTimestamp = new Date(nowMs + graceSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  meta.deletionGracePeriodSeconds = graceSeconds;
}
