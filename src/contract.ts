/**
 * The conndrain contract: every label, annotation, hook kind and drain state name.
 * These names are fixed by the design (../shared/design.md); every other module reads
 * them from here and nowhere else.
 */

export const DOMAIN = 'conndrain.io';

/** Namespace label that opts a namespace in (the webhook's namespaceSelector). */
export const NAMESPACE_INJECT_LABEL = `${DOMAIN}/inject`;
export const NAMESPACE_INJECT_VALUE = 'enabled';

/** Pod annotations set by app teams. */
export const ANNOTATION_DRAIN = `${DOMAIN}/drain`;
export const ANNOTATION_MIN_DRAIN = `${DOMAIN}/min-drain`;
export const ANNOTATION_SHUTDOWN_GRACE = `${DOMAIN}/shutdown-grace`;
export const ANNOTATION_CONTAINERS = `${DOMAIN}/containers`;
export const ANNOTATION_HOOK = `${DOMAIN}/hook`;
/** `off` (or `false`): conndrain does not pin this pod's flows with a twin IPVS service while it drains (flow pinning). */
export const ANNOTATION_FLOW_PINNING = `${DOMAIN}/flow-pinning`;

/** Written by the webhook. */
export const LABEL_MANAGED = `${DOMAIN}/managed`;
export const LABEL_MANAGED_VALUE = 'true';
export const ANNOTATION_DRAIN_ID = `${DOMAIN}/drain-id`;
export const ANNOTATION_INJECTED = `${DOMAIN}/injected`;

/** The label selector agents watch with. */
export const MANAGED_SELECTOR = `${LABEL_MANAGED}=${LABEL_MANAGED_VALUE}`;

/** Every annotation an app team may set, in documentation order. */
export const USER_ANNOTATIONS = [
  ANNOTATION_DRAIN,
  ANNOTATION_MIN_DRAIN,
  ANNOTATION_SHUTDOWN_GRACE,
  ANNOTATION_CONTAINERS,
  ANNOTATION_HOOK,
] as const;

export const HOOK_KINDS = ['agent', 'sleep', 'exec'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

export const DRAIN_STATES = ['serving', 'draining', 'gone', 'flushed'] as const;
export type DrainState = (typeof DRAIN_STATES)[number];

/** Defaults from the contract table. */
export const DEFAULT_MIN_DRAIN_SECONDS = 5;
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;
/** Kubernetes' own default terminationGracePeriodSeconds. */
export const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

/** Path of the agent's drain API; the hook of kind `agent` calls `${DRAIN_API_PREFIX}/<drain-id>`. */
export const DRAIN_API_PREFIX = '/v1/drain';
/** The agent listens on the node's loopback; the kubelet sends the hook from the node's netns. */
export const DRAIN_API_HOST = '127.0.0.1';

/** The namespace the manifests install into. */
export const SYSTEM_NAMESPACE = 'conndrain-system';

/** Kubernetes Event reasons the agent records on pods. */
export const EVENT_DRAIN_STARTED = 'DrainStarted';
export const EVENT_DRAIN_FINISHED = 'DrainFinished';
export const EVENT_CONNTRACK_FLUSHED = 'ConntrackFlushed';
/** A drain whose held preStop call an agent crash cut short (the kubelet saw a reset and moved on). */
export const EVENT_DRAIN_INTERRUPTED = 'DrainInterrupted';
