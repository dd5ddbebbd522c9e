import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { livePodIps, parseInventory, type EndpointSliceLike } from '../src/stale/index.js';

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
  kubeconfig?: string;
  nodeName?: string;
}

/** Reads endpoints from a file (offline) or from the API server (list, all namespaces). */
export async function loadInventory(options: InventoryOptions): Promise<StaleInventory> {
  if (options.endpoints !== undefined) return await fromFile(options.endpoints);
  const kubeconfig = options.kubeconfig ?? process.env.KUBECONFIG;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (kubeconfig !== undefined && kubeconfig !== '') kc.loadFromFile(kubeconfig);
  else if (process.env.KUBERNETES_SERVICE_HOST !== undefined) kc.loadFromCluster();
  else throw new Error('no endpoints: give --endpoints FILE (EndpointSlices, e.g. `kubectl get endpointslices,pods -A -o yaml`) or --kubeconfig FILE');
  return await fromApi(kc, options.nodeName);
}

async function fromFile(path: string): Promise<StaleInventory> {
  const text = await readFile(path, 'utf8');
  const parsed = parseInventory(text);
  if (!parsed.ok) throw new Error(`${path}: ${parsed.error.join('; ')}`);
  return { source: path, slices: parsed.value.slices, podIps: livePodIps(parsed.value.pods) };
}

async function fromApi(kc: KubeConfig, nodeName: string | undefined): Promise<StaleInventory> {
  const { CoreV1Api, DiscoveryV1Api } = await import('@kubernetes/client-node');
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const slices: EndpointSliceLike[] = [];
  let token: string | undefined;
  do {
    const page = await discovery.listEndpointSliceForAllNamespaces({ limit: 500, ...(token === undefined ? {} : { _continue: token }) });
    slices.push(...page.items);
    token = page.metadata?._continue;
  } while (token !== undefined && token !== '');
  let podIps = new Set<string>();
  if (nodeName !== undefined && nodeName !== '') {
    const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
    podIps = livePodIps(pods.items);
  }
  const { makeLivePodHolders } = await import('../agent/janitor/live-pods.js');
  const livePodHolders = makeLivePodHolders(kc);
  return { source: kc.getCurrentCluster()?.server ?? 'API server', slices, podIps, livePodHolders };
}
