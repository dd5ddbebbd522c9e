import type { PodLike } from './pod-like.js';

/** True when the pod's `Ready` condition is `True` (what endpoints and service proxies follow). */
export function isPodReady(pod: PodLike): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A pod in phase Succeeded or Failed runs nothing and its IP may already belong to another pod. */
export function isPodTerminal(pod: PodLike): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}
