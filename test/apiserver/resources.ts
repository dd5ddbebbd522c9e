/** The collections the API stand-in serves: their kinds and URL paths (cluster-wide and namespaced). */
export type Resource = 'pods' | 'endpointslices';

export const RESOURCES: Readonly<Record<Resource, { kind: string; listKind: string; apiVersion: string; path: RegExp }>> = {
  pods: { kind: 'Pod', listKind: 'PodList', apiVersion: 'v1', path: /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?pods$/ },
  endpointslices: {
    kind: 'EndpointSlice',
    listKind: 'EndpointSliceList',
    apiVersion: 'discovery.k8s.io/v1',
    path: /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?endpointslices$/,
  },
};

/** Which collection a path lists or watches, and its namespace (undefined = all namespaces). */
export function collectionOf(pathname: string): { resource: Resource; namespace: string | undefined } | undefined {
  for (const resource of Object.keys(RESOURCES) as Resource[]) {
    const m = RESOURCES[resource].path.exec(pathname);
    if (m !== null) return { resource, namespace: m[1] };
  }
  return undefined;
}
