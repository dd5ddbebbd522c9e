/**
 * What the agent keeps of one `discovery.k8s.io/v1` EndpointSlice: its Service, its ports, and
 * per endpoint the pod it stands for (targetRef.uid), its addresses, node and the two
 * conditions a drain reads (KEP-1672: `serving`, `terminating`). Field-masked before parsing
 * (SLICE_FIELDS), so managedFields, hints and zones are never built.
 */
import type { FieldMask } from '../field-mask.js';
import { SERVICE_LABEL_FLOW_PINNING, SERVICE_LABEL_FLOW_PINNING_OFF } from '../contract.js';
import { normalizeIp } from '../pod/ips.js';
import { SERVICE_NAME_LABEL, type EndpointSliceLike } from '../stale/endpoint-slice.js';

export interface SlicePort {
  port: number;
  /** `tcp`, `udp` or `sctp`. */
  protocol: string;
}

export interface SliceEndpoint {
  /** The pod's uid (targetRef.uid); `namespace/name` or the address when the slice names no uid. */
  uid: string;
  /** `namespace/name` of the pod, for logs. */
  key: string;
  nodeName: string | undefined;
  addresses: string[];
  serving: boolean;
  terminating: boolean;
}

export interface SliceView {
  /** `namespace/name` of the slice. */
  key: string;
  namespace: string;
  /** `namespace/service`. */
  service: string;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
  /** The Service turned flow pinning off (its label, copied onto the slice). */
  flowPinningOff: boolean;
}

/** The raw slice fields read here (and by the janitor's ownership index). */
export const SLICE_FIELDS: FieldMask = {
  metadata: { name: true, namespace: true, resourceVersion: true, labels: { [SERVICE_NAME_LABEL]: true, [SERVICE_LABEL_FLOW_PINNING]: true } },
  addressType: true,
  ports: { name: true, port: true, protocol: true },
  endpoints: { addresses: true, conditions: true, nodeName: true, targetRef: { kind: true, name: true, namespace: true, uid: true } },
};

/** The raw slice as masked (EndpointSliceLike plus the targetRef's uid). */
export type RawSlice = EndpointSliceLike & {
  endpoints?: Array<NonNullable<EndpointSliceLike['endpoints']>[number] & { targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string } | null }> | null;
};

export function viewSlice(raw: RawSlice): SliceView {
  const namespace = raw.metadata?.namespace ?? '';
  const key = `${namespace}/${raw.metadata?.name ?? ''}`;
  const serviceName = raw.metadata?.labels?.[SERVICE_NAME_LABEL];
  const ports: SlicePort[] = [];
  for (const p of raw.ports ?? []) {
    if (typeof p.port === 'number') ports.push({ port: p.port, protocol: (p.protocol ?? 'TCP').toLowerCase() });
  }
  const endpoints: SliceEndpoint[] = [];
  for (const e of raw.endpoints ?? []) {
    const addresses = (e.addresses ?? []).filter((a) => typeof a === 'string' && a.trim() !== '').map(normalizeIp);
    if (addresses.length === 0) continue;
    const ref = e.targetRef;
    const podKey = ref?.name === undefined ? undefined : `${ref.namespace ?? namespace}/${ref.name}`;
    const ready = e.conditions?.ready;
    endpoints.push({
      uid: ref?.uid ?? podKey ?? `address/${addresses[0] ?? ''}`,
      key: podKey ?? addresses.join(','),
      nodeName: e.nodeName ?? undefined,
      addresses,
      // The API: serving unset means "same as ready"; ready unset means ready.
      serving: e.conditions?.serving ?? ready ?? true,
      terminating: e.conditions?.terminating ?? false,
    });
  }
  return {
    key,
    namespace,
    service: serviceName === undefined || serviceName === '' ? key : `${namespace}/${serviceName}`,
    ports,
    endpoints,
    flowPinningOff: raw.metadata?.labels?.[SERVICE_LABEL_FLOW_PINNING] === SERVICE_LABEL_FLOW_PINNING_OFF,
  };
}
