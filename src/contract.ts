/**
 * The conndrain contract: every label, annotation, hook kind and drain state name.
 * These names are fixed by the contract (docs/design/contract.md); every other module reads
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
/**
 * Retired pod annotation: `off` (or `false`) turned flow pinning off for this pod. Flow pinning
 * acts per IPVS service on every node, so the switch is the Service label
 * SERVICE_LABEL_FLOW_PINNING; the webhook and `conndrain inject` warn where they still see this.
 */
export const ANNOTATION_FLOW_PINNING = `${DOMAIN}/flow-pinning`;

/** Service labels (the EndpointSlice controller copies them onto the Service's slices). */
export const SERVICE_LABEL_FLOW_PINNING = `${DOMAIN}/flow-pinning`;
export const SERVICE_LABEL_FLOW_PINNING_OFF = 'off';
/** `disabled`: the Service is out of the cross-node hold and the ghost flush. */
export const SERVICE_LABEL_HOLD = `${DOMAIN}/hold`;
export const SERVICE_LABEL_HOLD_DISABLED = 'disabled';

/** Written by the webhook. */
export const LABEL_MANAGED = `${DOMAIN}/managed`;
export const LABEL_MANAGED_VALUE = 'true';
export const ANNOTATION_DRAIN_ID = `${DOMAIN}/drain-id`;
export const ANNOTATION_INJECTED = `${DOMAIN}/injected`;

/** Annotations the webhook writes: known keys on a pod, never reported as typos. */
export const WEBHOOK_ANNOTATIONS = [ANNOTATION_DRAIN_ID, ANNOTATION_INJECTED] as const;

/** The label selector agents watch with. */
export const MANAGED_SELECTOR = `${LABEL_MANAGED}=${LABEL_MANAGED_VALUE}`;

/** The namespaces whose Services' endpoints the agents hold and flush (the webhook's namespaceSelector too). */
export const NAMESPACE_INJECT_SELECTOR = `${NAMESPACE_INJECT_LABEL}=${NAMESPACE_INJECT_VALUE}`;
/**
 * The EndpointSlices an agent watches: kube-proxy's selector (no headless Service, none another
 * proxy serves). The Services labelled `conndrain.io/hold=disabled` are read too and acted on
 * never: their endpoints' addresses are live pods' (the IP-reuse check and the restart sweep
 * must see them), which a server-side `!=disabled` would hide.
 */
export const ENDPOINT_SLICE_SELECTOR = '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name';

/** Every annotation an app team may set, in documentation order. */
export const USER_ANNOTATIONS = [
  ANNOTATION_DRAIN,
  ANNOTATION_MIN_DRAIN,
  ANNOTATION_SHUTDOWN_GRACE,
  ANNOTATION_CONTAINERS,
  ANNOTATION_HOOK,
] as const;

/**
 * Every `conndrain.io/*` annotation key a pod or pod template may carry, the one list the typo
 * check (src/inject/keys.ts) compares against: what app teams set and what the webhook writes.
 */
export const KNOWN_POD_ANNOTATIONS: readonly string[] = [...USER_ANNOTATIONS, ...WEBHOOK_ANNOTATIONS];

/** Retired pod annotations, with what to do instead (warned about wherever they are seen). */
export const RETIRED_POD_ANNOTATIONS: Readonly<Record<string, string>> = {
  [ANNOTATION_FLOW_PINNING]: `flow pinning acts per IPVS service on every node, so it is switched off per Service: label the Service ${SERVICE_LABEL_FLOW_PINNING}=${SERVICE_LABEL_FLOW_PINNING_OFF} instead`,
};

/** Keys that belong on another kind of object: found on a pod, the warning says where they go. */
export const KEYS_OF_OTHER_KINDS: Readonly<Record<string, 'Namespace' | 'Service'>> = {
  [NAMESPACE_INJECT_LABEL]: 'Namespace',
  [SERVICE_LABEL_HOLD]: 'Service',
  [SERVICE_LABEL_FLOW_PINNING]: 'Service',
};

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

/**
 * The webhook's namespace (its Deployment, Service, PKI): it enforces Pod Security `restricted`.
 */
export const SYSTEM_NAMESPACE = 'conndrain-system';
/**
 * The node agent's namespace, the only one that enforces `privileged`: the agent needs
 * hostNetwork, a hostPath volume and NET_ADMIN, which `baseline` forbids.
 */
export const AGENT_NAMESPACE = 'conndrain-agent';

/** Kubernetes Event reasons the agent records on pods. */
export const EVENT_DRAIN_STARTED = 'DrainStarted';
export const EVENT_DRAIN_FINISHED = 'DrainFinished';
export const EVENT_CONNTRACK_FLUSHED = 'ConntrackFlushed';
/** A drain whose held preStop call an agent crash cut short (the kubelet saw a reset and moved on). */
export const EVENT_DRAIN_INTERRUPTED = 'DrainInterrupted';
