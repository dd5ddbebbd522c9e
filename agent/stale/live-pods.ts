import { podHoldsIps, type PodLike } from '../../src/stale/index.js';
import type { KubeConnection } from '../../kube/connection.js';
import { kubeRequest } from '../../kube/request.js';

/**
 * Asks the API server which of these addresses a live pod holds (`status.podIP` field
 * selector, all namespaces, 8 at a time). Rejects on any API error: callers then delete nothing.
 * `fromCache`: read from the API server's watch cache (resourceVersion=0) instead of etcd: the
 * agent asks this on every node after a restart, and a quorum read scans every pod in etcd.
 */
export function makeLivePodHolders(connection: KubeConnection, concurrency = 8, options: { fromCache?: boolean } = {}): (addresses: readonly string[]) => Promise<Set<string>> {
  return async (addresses) => {
    const held = new Set<string>();
    const queue = [...addresses];
    const worker = async (): Promise<void> => {
      for (let address = queue.shift(); address !== undefined; address = queue.shift()) {
        const pods = (await kubeRequest(connection, 'GET', '/api/v1/pods', { fieldSelector: `status.podIP=${address}`, ...(options.fromCache === true ? { resourceVersion: '0' } : {}) })) as { items?: PodLike[] } | undefined;
        if ((pods?.items ?? []).some(podHoldsIps)) held.add(address);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    return held;
  };
}
