import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConnection } from '../../kube/connection.js';
import { livePodIps, pruneEndpointSlice, type EndpointSliceLike, type PodLike } from '../../src/stale/index.js';
import { parseInventory } from '../../src/stale/inventory-file.js';

/** Where endpoints come from, and how to ask whether a live pod holds an address. */
export interface StaleInventory {
  source: string;
  slices: EndpointSliceLike[];
  /** Addresses of live pods known up front (the file's pods, or this node's pods from the API). */
  podIps: Set<string>;
  /** Of these addresses, the ones a live pod anywhere holds (API only: `status.podIP` queries). */
  livePodHolders?: (addresses: readonly string[]) => Promise<Set<string>>;
}

export interface InventoryOptions {
  endpoints?: string;
  /** A kubeconfig file; in-cluster (the service account) when empty and `serviceHost` is set. */
  kubeconfig?: string | undefined;
  /** The kubeconfig's context (--context); with no kubeconfig given, kubectl's ~/.kube/config is read. */
  context?: string | undefined;
  /** $HOME, for ~/.kube/config. */
  home?: string | undefined;
  serviceHost?: string | undefined;
  servicePort?: string | undefined;
  nodeName?: string | undefined;
}

/** Reads endpoints from a file (offline) or from the API server (list, all namespaces). */
export async function loadInventory(options: InventoryOptions): Promise<StaleInventory> {
  if (options.endpoints !== undefined) return await fromFile(options.endpoints);
  const inCluster = options.serviceHost !== undefined && options.serviceHost !== '';
  const kubeconfig = kubeconfigFor(options);
  if (kubeconfig === undefined && !inCluster) {
    throw new Error('no endpoints: give --endpoints FILE (EndpointSlices, e.g. `kubectl get endpointslices,pods -A -o yaml`) or --kubeconfig FILE');
  }
  const { loadKubeConnection } = await import('../../kube/load.js');
  const connection = await loadKubeConnection({ kubeconfig, context: options.context, serviceHost: options.serviceHost, servicePort: options.servicePort });
  try {
    return await fromApi(connection, options.nodeName);
  } catch (error) {
    throw new ApiUnavailable(`${connection.getCurrentCluster()?.server ?? 'the API server'}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The API server did not answer the lists (unreachable, refused, forbidden): the state of the
 * cluster, not a mistake in the command line, so an operational failure (exit 1,
 * docs/cli-errors.md), where a bad file or kubeconfig is a usage error (2).
 */
export class ApiUnavailable extends Error {
  override name = 'ApiUnavailable';
}

/** The kubeconfig to read: the one given, else kubectl's default when a --context asks for one. */
function kubeconfigFor(options: InventoryOptions): string | undefined {
  if (options.kubeconfig !== undefined && options.kubeconfig !== '') return options.kubeconfig;
  if (options.context === undefined || options.context === '') return undefined;
  if (options.home === undefined || options.home === '') throw new Error(`--context ${options.context}: no kubeconfig (--kubeconfig, $KUBECONFIG) and no $HOME for ~/.kube/config`);
  return join(options.home, '.kube', 'config');
}

/** Whether `text` holds at least one Kubernetes object (a mapping with a kind; a List counts). */
async function holdsAnObject(text: string): Promise<boolean> {
  const { parseAllDocuments } = await import('yaml');
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return false;
  return docs.some((doc) => {
    const value: unknown = doc.errors.length > 0 ? undefined : doc.toJS();
    return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Record<string, unknown>)['kind'] === 'string';
  });
}

async function fromFile(path: string): Promise<StaleInventory> {
  const { decodeManifest } = await import('../manifest/input.js');
  const text = decodeManifest(path, await readFile(path));
  const parsed = parseInventory(text);
  if (!parsed.ok) throw new Error(`${path}: ${parsed.error.join('; ')}`);
  // Text that is no object at all (a stray file) would read as "no endpoints anywhere".
  if (!(await holdsAnObject(text))) throw new Error(`${path}: no Kubernetes object in the file; expected \`kubectl get endpointslices,pods -A -o yaml\``);
  return { source: path, slices: parsed.value.slices, podIps: livePodIps(parsed.value.pods) };
}

async function fromApi(connection: KubeConnection, nodeName: string | undefined): Promise<StaleInventory> {
  const [{ kubeRequest }, { listPages }, { makeLivePodHolders }, { ENDPOINT_SLICES_PATH, SLICE_PAGE_SIZE }] = await Promise.all([
    import('../../kube/request.js'),
    import('../../kube/list-pages.js'),
    import('../../agent/stale/live-pods.js'),
    import('../../agent/stale/slice-watch.js'),
  ]);
  const slices: EndpointSliceLike[] = [];
  for await (const page of listPages(connection, ENDPOINT_SLICES_PATH, { pageSize: SLICE_PAGE_SIZE })) {
    for (const slice of page.items ?? []) slices.push(pruneEndpointSlice(slice as EndpointSliceLike));
  }
  let podIps = new Set<string>();
  if (nodeName !== undefined && nodeName !== '') {
    const pods = (await kubeRequest(connection, 'GET', '/api/v1/pods', { fieldSelector: `spec.nodeName=${nodeName}` })) as { items?: PodLike[] } | undefined;
    podIps = livePodIps(pods?.items ?? []);
  }
  return { source: connection.getCurrentCluster()?.server ?? 'API server', slices, podIps, livePodHolders: makeLivePodHolders(connection) };
}
