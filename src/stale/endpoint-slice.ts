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
