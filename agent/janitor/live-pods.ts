import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { podHoldsIps } from '../../src/stale/index.js';

/**
 * Asks the API server which of these addresses a live pod holds (`status.podIP` field
 * selector, all namespaces, 8 at a time). Rejects on any API error: callers then delete nothing.
 */
export function makeLivePodHolders(kubeConfig: KubeConfig, concurrency = 8): (addresses: readonly string[]) => Promise<Set<string>> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return async (addresses) => {
    const held = new Set<string>();
    const queue = [...addresses];
    const worker = async (): Promise<void> => {
      for (let address = queue.shift(); address !== undefined; address = queue.shift()) {
        const pods = await core.listPodForAllNamespaces({ fieldSelector: `status.podIP=${address}` });
        if (pods.items.some(podHoldsIps)) held.add(address);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    return held;
  };
}
