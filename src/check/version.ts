/**
 * The conndrain version a workload runs: its image tag (`...:0.1.0`, a leading `v` dropped),
 * else its `app.kubernetes.io/version` label (a release pinned by digest has no tag).
 */
import type { KubeJson } from './types.js';

export function imageTagOf(image: string): string | undefined {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  if (colon < 0) return undefined;
  const tag = withoutDigest.slice(colon + 1);
  return tag.startsWith('v') ? tag.slice(1) : tag;
}

export function workloadVersionOf(workload: KubeJson): { version: string | undefined; image: string | undefined } {
  const containers = ((workload.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } } | undefined)?.template?.spec?.containers) ?? [];
  const image = containers[0]?.image;
  const tag = image === undefined ? undefined : imageTagOf(image);
  return { version: tag ?? workload.metadata?.labels?.['app.kubernetes.io/version'], image };
}
