/**
 * The few pod fields conndrain reads, typed structurally so both shapes the client library
 * hands out fit: listed objects (dates deserialized to `Date`) and watch events (raw JSON,
 * dates as RFC 3339 strings).
 */
export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: Date | string;
    deletionGracePeriodSeconds?: number;
  };
  spec?: {
    nodeName?: string;
    hostNetwork?: boolean;
    terminationGracePeriodSeconds?: number;
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: Array<{ ip?: string }>;
    conditions?: Array<{ type?: string; status?: string }>;
  };
}

/** `namespace/name`, the form every log line and event uses. */
export function podKey(pod: PodLike): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
