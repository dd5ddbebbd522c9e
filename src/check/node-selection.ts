/**
 * Which nodes a DaemonSet's pods may run on, as far as its node selector and required node
 * affinity say (taints are tolerated by the agent's DaemonSet; a node it cannot tolerate shows
 * up as one without an agent, which is what an operator wants to see).
 */
import type { KubeJson } from './types.js';

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

function matchesRequirement(labels: Record<string, string>, r: Requirement): boolean {
  const value = labels[r.key];
  switch (r.operator) {
    case 'In': return value !== undefined && (r.values ?? []).includes(value);
    case 'NotIn': return value === undefined || !(r.values ?? []).includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && Number(value) > Number(r.values?.[0]);
    case 'Lt': return value !== undefined && Number(value) < Number(r.values?.[0]);
    default: return false;
  }
}

/** Whether a pod template of the DaemonSet `ds` may be placed on `node` (labels only). */
export function nodeSelectedBy(ds: KubeJson, node: KubeJson): boolean {
  const labels = node.metadata?.labels ?? {};
  const podSpec = ((ds.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec ?? {});
  const selector = (podSpec.nodeSelector ?? {}) as Record<string, string>;
  if (!Object.entries(selector).every(([k, v]) => labels[k] === v)) return false;
  const terms = ((podSpec.affinity as { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Array<{ matchExpressions?: Requirement[] }> } } } | undefined)
    ?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms) ?? [];
  // Terms are ORed, the expressions of a term ANDed; no term: every node.
  return terms.length === 0 || terms.some((t) => (t.matchExpressions ?? []).every((r) => matchesRequirement(labels, r)));
}
