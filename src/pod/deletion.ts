import type { PodLike } from './pod-like.js';

/** Milliseconds since the epoch of `metadata.deletionTimestamp`, or undefined when not deleting (or unparseable). */
export function deletionTimestampMs(pod: PodLike): number | undefined {
  const raw = pod.metadata?.deletionTimestamp;
  if (raw === undefined || raw === null) return undefined;
  const ms = raw instanceof Date ? raw.getTime() : Date.parse(raw);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * When a deleting pod is gone for good. The API server sets `deletionTimestamp` to the time
 * of the delete request plus the grace period (`deletionGracePeriodSeconds`), so the design's
 * "deletionTimestamp + grace elapsed" is the instant `deletionTimestamp` itself; `slackMs`
 * gives the kubelet time to kill the containers after it. Undefined when not deleting.
 */
export function goneAtMs(pod: PodLike, slackMs: number): number | undefined {
  const at = deletionTimestampMs(pod);
  return at === undefined ? undefined : at + slackMs;
}
