/**
 * The parts of a `discovery.k8s.io/v1` EndpointSlice that ownership needs. Structural, so
 * `@kubernetes/client-node`'s V1EndpointSlice and plain JSON from a file both fit.
 */
export interface EndpointSliceLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> | null } | null;
  addressType?: string | null;
  ports?: Array<{ name?: string | null; port?: number | null; protocol?: string | null }> | null;
  endpoints?: Array<{
    addresses?: string[] | null;
    conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null } | null;
    nodeName?: string | null;
    targetRef?: { kind?: string; name?: string; namespace?: string } | null;
  }> | null;
}

/** The label that names an EndpointSlice's Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** `namespace/name` of a slice (its identity in the index). */
export function sliceKey(slice: EndpointSliceLike): string {
  return `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
}

/** `namespace/service` the slice belongs to, or the slice's own key when unlabelled. */
export function serviceNameOf(slice: EndpointSliceLike): string {
  const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  return service === undefined || service === '' ? sliceKey(slice) : `${slice.metadata?.namespace ?? ''}/${service}`;
}

/**
 * A slice reduced to the fields above (a watch keeps thousands: the API object also carries
 * managedFields, annotations, hints, zones...). Only the service-name label is kept.
 */
export function pruneEndpointSlice(slice: EndpointSliceLike): EndpointSliceLike {
  const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  return {
    metadata: {
      ...(slice.metadata?.name === undefined ? {} : { name: slice.metadata.name }),
      ...(slice.metadata?.namespace === undefined ? {} : { namespace: slice.metadata.namespace }),
      ...(service === undefined ? {} : { labels: { [SERVICE_NAME_LABEL]: service } }),
    },
    addressType: slice.addressType ?? null,
    ports: (slice.ports ?? []).map((p) => ({ name: p.name ?? null, port: p.port ?? null, protocol: p.protocol ?? null })),
    endpoints: (slice.endpoints ?? []).map((e) => ({
      addresses: e.addresses ?? [],
      conditions: { ready: e.conditions?.ready ?? null, serving: e.conditions?.serving ?? null, terminating: e.conditions?.terminating ?? null },
      nodeName: e.nodeName ?? null,
      targetRef: e.targetRef === undefined || e.targetRef === null ? null : { ...(e.targetRef.kind === undefined ? {} : { kind: e.targetRef.kind }), ...(e.targetRef.name === undefined ? {} : { name: e.targetRef.name }), ...(e.targetRef.namespace === undefined ? {} : { namespace: e.targetRef.namespace }) },
    })),
  };
}
