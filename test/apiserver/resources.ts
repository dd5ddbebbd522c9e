/** The collections the API stand-in serves: their kinds and URL paths (cluster-wide and namespaced). */
export type Resource = 'pods' | 'endpointslices' | 'namespaces' | 'services';

export interface ResourceInfo {
  kind: string;
  listKind: string;
  apiVersion: string;
  /** False for cluster-scoped objects (Namespaces): no metadata.namespace, keyed by name alone. */
  namespaced: boolean;
  path: RegExp;
  /** One object's path: its namespace (empty for cluster-scoped) and name. */
  item: RegExp;
}

export const RESOURCES: Readonly<Record<Resource, ResourceInfo>> = {
  pods: { kind: 'Pod', listKind: 'PodList', apiVersion: 'v1', namespaced: true, path: /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?pods$/, item: /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/ },
  endpointslices: {
    kind: 'EndpointSlice',
    listKind: 'EndpointSliceList',
    apiVersion: 'discovery.k8s.io/v1',
    namespaced: true,
    path: /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?endpointslices$/,
    item: /^\/apis\/discovery\.k8s\.io\/v1\/namespaces\/([^/]+)\/endpointslices\/([^/]+)$/,
  },
  namespaces: { kind: 'Namespace', listKind: 'NamespaceList', apiVersion: 'v1', namespaced: false, path: /^\/api\/v1\/namespaces$/, item: /^\/api\/v1\/namespaces\/()([^/]+)$/ },
  services: { kind: 'Service', listKind: 'ServiceList', apiVersion: 'v1', namespaced: true, path: /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?services$/, item: /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/ },
};

export const RESOURCE_NAMES = Object.keys(RESOURCES) as Resource[];

/** Which collection a path lists or watches, and its namespace (undefined = all namespaces). */
export function collectionOf(pathname: string): { resource: Resource; namespace: string | undefined } | undefined {
  for (const resource of RESOURCE_NAMES) {
    const m = RESOURCES[resource].path.exec(pathname);
    if (m !== null) return { resource, namespace: m[1] };
  }
  return undefined;
}

/** The store key of an object: `<namespace>/<name>`, or `<name>` for cluster-scoped ones. */
export function keyOf(resource: Resource, namespace: string | undefined, name: string): string {
  return RESOURCES[resource].namespaced ? `${namespace ?? 'default'}/${name}` : name;
}

/** Which object a path names (GET of one object): its resource, namespace and name. */
export function itemOf(pathname: string): { resource: Resource; namespace: string; name: string } | undefined {
  for (const resource of RESOURCE_NAMES) {
    const m = RESOURCES[resource].item.exec(pathname);
    if (m !== null) return { resource, namespace: m[1] ?? '', name: m[2] ?? '' };
  }
  return undefined;
}
