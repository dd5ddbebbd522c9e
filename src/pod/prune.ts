import { DOMAIN } from '../contract.js';
import type { FieldMask } from '../field-mask.js';
import type { PodLike } from './pod-like.js';

const PREFIX = `${DOMAIN}/`;

/**
 * The fields prunePod reads, as a field mask: the watch decodes only these (kube/json-mask.ts),
 * so the rest of a pod is never built. Keep the two in step (json-mask.test.ts fails when the
 * mask drops a field prunePod keeps).
 */
export const POD_FIELDS: FieldMask = {
  metadata: {
    name: true,
    namespace: true,
    uid: true,
    resourceVersion: true,
    labels: { [`${PREFIX}*`]: true },
    annotations: { [`${PREFIX}*`]: true },
    deletionTimestamp: true,
    deletionGracePeriodSeconds: true,
  },
  spec: { nodeName: true, hostNetwork: true },
  status: { phase: true, podIP: true, podIPs: { ip: true }, conditions: { type: true, status: true } },
};

function ours(map: Record<string, string> | undefined): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) if (k.startsWith(PREFIX)) out[k] = v;
  return out;
}

/**
 * Only the pod fields conndrain reads (identity, our labels and annotations, deletion, node,
 * IPs, phase, the Ready condition), so a watch cache of 10,000 pods stays small. Every
 * other field (containers, volumes, managedFields, statuses...) is dropped.
 */
export function prunePod(pod: PodLike): PodLike {
  const m = pod.metadata ?? {};
  const ready = (pod.status?.conditions ?? []).filter((c) => c.type === 'Ready').map((c) => ({ type: c.type, status: c.status }));
  const pruned: PodLike = {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      labels: ours(m.labels),
      annotations: ours(m.annotations),
      deletionTimestamp: m.deletionTimestamp,
      deletionGracePeriodSeconds: m.deletionGracePeriodSeconds,
    },
    spec: { nodeName: pod.spec?.nodeName, hostNetwork: pod.spec?.hostNetwork },
    status: {
      phase: pod.status?.phase,
      podIP: pod.status?.podIP,
      podIPs: pod.status?.podIPs?.map((p) => ({ ip: p.ip })),
      conditions: ready,
    },
  };
  return pruned;
}
