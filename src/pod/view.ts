import { ANNOTATION_DRAIN_ID } from '../contract.js';
import { goneAtMs } from './deletion.js';
import { podIps } from './ips.js';
import { podKey, type PodLike } from './pod-like.js';
import { isPodReady, isPodTerminal } from './readiness.js';

/** What the drain plan needs of one pod, read once from the API object. */
export interface PodView {
  uid: string;
  /** `namespace/name`. */
  key: string;
  nodeName: string | undefined;
  ips: string[];
  ready: boolean;
  /** Set when the pod is being deleted. */
  deleting: boolean;
  /** When a deleting pod counts as gone (deletionTimestamp + slack); undefined when not deleting. */
  goneAtMs: number | undefined;
  /** Succeeded or Failed: nothing runs, the IP is free. */
  terminal: boolean;
  drainId: string | undefined;
}

export function viewPod(pod: PodLike, goneSlackMs: number): PodView {
  const goneAt = goneAtMs(pod, goneSlackMs);
  return {
    uid: pod.metadata?.uid ?? podKey(pod),
    key: podKey(pod),
    nodeName: pod.spec?.nodeName,
    ips: podIps(pod),
    ready: isPodReady(pod),
    deleting: goneAt !== undefined,
    goneAtMs: goneAt,
    terminal: isPodTerminal(pod),
    drainId: pod.metadata?.annotations?.[ANNOTATION_DRAIN_ID],
  };
}
