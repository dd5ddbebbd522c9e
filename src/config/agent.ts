import { AGENT_NAMESPACE } from '../contract.js';
import { DEFAULT_FWMARK_RANGE, parseFwmarkRange, type FwmarkRange } from '../flowpin/fwmark-range.js';
import { fail, ok, type Result } from '../result.js';
import { METRICS_SECURE_OPTION } from './metrics.js';
import { parseConfig, type ConfigOf } from './config-of.js';
import { parseOption, type ConfigSources, type OptionSpec } from './options.js';

/** Every flag of `conndrain agent`. NODE_NAME and POD_NAMESPACE come from the downward API. */
export const AGENT_OPTIONS = {
  nodeName: { kind: 'string', flag: 'node-name', env: 'NODE_NAME', required: true, description: 'name of this node (downward API spec.nodeName)' },
  podNamespace: { kind: 'string', flag: 'pod-namespace', env: 'POD_NAMESPACE', default: AGENT_NAMESPACE, description: 'namespace the agent runs in (downward API metadata.namespace)' },
  kubeconfig: { kind: 'string', flag: 'kubeconfig', env: 'KUBECONFIG', description: 'kubeconfig file; in-cluster service account when unset' },
  kubernetesServiceHost: { kind: 'string', flag: 'kubernetes-service-host', env: 'KUBERNETES_SERVICE_HOST', description: 'API server address in-cluster (the kubelet sets the variable); used when --kubeconfig is unset' },
  kubernetesServicePort: { kind: 'string', flag: 'kubernetes-service-port', env: 'KUBERNETES_SERVICE_PORT', description: 'API server port in-cluster (the kubelet sets the variable); used when --kubeconfig is unset' },
  drainAddress: { kind: 'string', flag: 'drain-address', env: 'CONNDRAIN_DRAIN_ADDRESS', default: '127.0.0.1', description: 'address of the drain API (loopback: the kubelet calls it from the node network namespace)' },
  drainPort: { kind: 'int', flag: 'drain-port', env: 'CONNDRAIN_DRAIN_PORT', default: 9901, min: 1, max: 65535, description: 'port of the drain API (the webhook --agent-port must match)' },
  metricsAddress: { kind: 'string', flag: 'metrics-address', env: 'CONNDRAIN_METRICS_ADDRESS', default: '0.0.0.0', description: 'address of /metrics (HTTPS with --metrics-secure)' },
  metricsPort: { kind: 'int', flag: 'metrics-port', env: 'CONNDRAIN_METRICS_PORT', default: 9902, min: 1, max: 65535, description: 'port of /metrics (HTTPS with --metrics-secure)' },
  metricsSecure: METRICS_SECURE_OPTION,
  metricsCertFile: { kind: 'string', flag: 'metrics-cert-file', env: 'CONNDRAIN_METRICS_CERT_FILE', default: '', description: 'PEM certificate for /metrics (with --metrics-key-file); a self-signed one made at start, in memory, when empty' },
  metricsKeyFile: { kind: 'string', flag: 'metrics-key-file', env: 'CONNDRAIN_METRICS_KEY_FILE', default: '', description: 'PEM key of --metrics-cert-file' },
  probesAddress: { kind: 'string', flag: 'probes-address', env: 'CONNDRAIN_PROBES_ADDRESS', default: '127.0.0.1', description: 'address of /healthz, /readyz and /debug/holds, plain HTTP (loopback: the agent runs in the node network namespace; the probes say host: 127.0.0.1)' },
  probesPort: { kind: 'int', flag: 'probes-port', env: 'CONNDRAIN_PROBES_PORT', default: 9903, min: 1, max: 65535, description: 'port of /healthz, /readyz and /debug/holds' },
  stateFile: { kind: 'string', flag: 'state-file', env: 'CONNDRAIN_STATE_FILE', default: '/var/lib/conndrain/state.json', description: 'where held IPVS servers are recorded so a restart resumes every hold' },
  ipvsHold: { kind: 'bool', flag: 'ipvs-hold', env: 'CONNDRAIN_IPVS_HOLD', default: true, description: 'hold draining pods\' IPVS real servers at weight 0' },
  holdInterval: { kind: 'duration', flag: 'hold-interval', env: 'CONNDRAIN_HOLD_INTERVAL', default: '1s', minMs: 50, maxMs: 60_000, description: 'how often held IPVS servers are re-asserted' },
  flushWindow: { kind: 'duration', flag: 'flush-window', env: 'CONNDRAIN_FLUSH_WINDOW', default: '200ms', minMs: 0, maxMs: 10_000, description: 'pods that go within this window are flushed in one conntrack pass' },
  flowPollInterval: { kind: 'duration', flag: 'flow-poll-interval', env: 'CONNDRAIN_FLOW_POLL_INTERVAL', default: '1s', minMs: 50, maxMs: 60_000, description: 'how often an adaptive drain checks for open flows' },
  flowIdle: { kind: 'duration', flag: 'flow-idle', env: 'CONNDRAIN_FLOW_IDLE', default: '10s', minMs: 0, maxMs: 600_000, description: 'a UDP/SCTP/IPIP entry not seen for this long is not an open flow' },
  unknownIdWait: { kind: 'duration', flag: 'unknown-id-wait', env: 'CONNDRAIN_UNKNOWN_ID_WAIT', default: '30s', minMs: 0, maxMs: 600_000, description: 'at start-up, how long a drain call for an id not known yet is held waiting for the first complete pod list (then answered as usual; 404 only for an id still unknown after it)' },
  flowVisibility: { kind: 'enum', flag: 'flow-visibility', env: 'CONNDRAIN_FLOW_VISIBILITY', default: 'auto', values: ['auto', 'conntrack', 'none'], description: 'whether netfilter conntrack sees pod traffic on this node: auto (detect an eBPF datapath such as Cilium\'s kube-proxy replacement), conntrack, or none (open flows unknown: every adaptive drain lasts its maximum)' },
  maxDrains: { kind: 'int', flag: 'max-drains', env: 'CONNDRAIN_MAX_DRAINS', default: 1024, min: 1, max: 100_000, description: 'most drain API requests held open at once' },
  watchList: { kind: 'enum', flag: 'watch-list', env: 'CONNDRAIN_WATCH_LIST', default: 'auto', values: ['auto', 'on', 'off'], description: 'how the pod watch gets its initial state: auto (a streaming list, sendInitialEvents, where the API server offers it; else, and for the rest of the process life once refused, a list from the watch cache), on (streaming list only), off (list only)' },
  relistBackoffMax: { kind: 'duration', flag: 'relist-backoff-max', env: 'CONNDRAIN_RELIST_BACKOFF_MAX', default: '30s', minMs: 100, maxMs: 600_000, description: 'longest wait before the watch restarts after an error' },
  goneSlack: { kind: 'duration', flag: 'gone-slack', env: 'CONNDRAIN_GONE_SLACK', default: '5s', minMs: 0, maxMs: 600_000, description: 'a deleting pod counts as gone this long after its deletionTimestamp (time for the kubelet to kill it)' },
  endpointDebounce: { kind: 'duration', flag: 'endpoint-debounce', env: 'CONNDRAIN_ENDPOINT_DEBOUNCE', default: '500ms', minMs: 0, maxMs: 600_000, description: 'an endpoint absent from every EndpointSlice this long is gone (a slice writer that removes before it adds: the EndpointSlice controller adds first)' },
  terminatingMax: { kind: 'duration', flag: 'terminating-max', env: 'CONNDRAIN_TERMINATING_MAX', default: '1h', minMs: 1000, maxMs: 86_400_000, description: 'an endpoint terminating longer than this counts as gone (its node is dead); the webhook\'s --max-duration, the longest drain it allows' },
  viewFresh: { kind: 'duration', flag: 'view-fresh', env: 'CONNDRAIN_VIEW_FRESH', default: '1s', minMs: 0, maxMs: 600_000, description: 'a decision by time on other nodes\' endpoints needs the EndpointSlice watch to have read something this recently; otherwise the slices are listed again first' },
  restartSweep: { kind: 'bool', flag: 'restart-sweep', env: 'CONNDRAIN_RESTART_SWEEP', default: true, description: 'after the first sync, one verified pass deletes entries DNATed to pod addresses no endpoint or local pod holds (pods deleted while no agent ran), after --janitor-grace' },
  statsInterval: { kind: 'duration', flag: 'stats-interval', env: 'CONNDRAIN_STATS_INTERVAL', default: '15s', minMs: 100, maxMs: 600_000, description: 'how often the node conntrack table count/limit/counters are read for metrics' },
  conntrackEvents: { kind: 'bool', flag: 'conntrack-events', env: 'CONNDRAIN_CONNTRACK_EVENTS', default: true, description: 'count open flows and delete a gone pod\'s entries from an index fed by conntrack events (filtered in the kernel to the managed pods\' IPs) instead of a table dump; a dump pass still verifies every deletion and takes over while the index is stale' },
  janitor: { kind: 'bool', flag: 'janitor', env: 'CONNDRAIN_JANITOR', default: false, description: 'delete stale conntrack entries of any pod (DNAT target no endpoint owns); needs endpointslices get/list/watch' },
  janitorInterval: { kind: 'duration', flag: 'janitor-interval', env: 'CONNDRAIN_JANITOR_INTERVAL', default: '30s', minMs: 1000, maxMs: 3_600_000, description: 'how often the janitor scans the conntrack table (also soon after an endpoint goes away)' },
  janitorGrace: { kind: 'duration', flag: 'janitor-grace', env: 'CONNDRAIN_JANITOR_GRACE', default: '5s', minMs: 0, maxMs: 600_000, description: 'an entry is deleted only after it has been stale this long (endpoint propagation races)' },
  flowPinning: { kind: 'bool', flag: 'flow-pinning', env: 'CONNDRAIN_FLOW_PINNING', default: true, description: 'keep the flows of draining pods in mh/sh IPVS services on their pod when they move to another node: a twin IPVS service per held service and an nftables rule sending TCP packets without SYN to it (needs IPVS and the IPVS hold; off by itself where IPVS is absent)' },
  fwmarkRange: { kind: 'string', flag: 'fwmark-range', env: 'CONNDRAIN_FWMARK_RANGE', default: DEFAULT_FWMARK_RANGE, description: 'firewall marks reserved for conndrain\'s twin IPVS services: VALUE/MASK or FIRST-LAST; must not overlap the service proxy\'s marks (kube-proxy 0x4000/0x8000, kube-router below 0x80000)' },
  cleanup: { kind: 'bool', flag: 'cleanup', env: 'CONNDRAIN_CLEANUP', default: false, description: 'remove every conndrain nftables table and twin IPVS service on this node, then exit' },
  logLevel: { kind: 'enum', flag: 'log-level', env: 'CONNDRAIN_LOG_LEVEL', default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], description: 'pino log level' },
} as const satisfies Record<string, OptionSpec>;

/**
 * `conndrain agent`'s config: one field per option of AGENT_OPTIONS (durations in ms, as
 * `<name>Ms`), except the mark range, which is parsed further into a range.
 */
export type AgentConfig = Omit<ConfigOf<typeof AGENT_OPTIONS>, 'fwmarkRange'> & { fwmarkRange: FwmarkRange };

/** The --fwmark-range option, parsed into a range (problems name the flag or variable). */
function loadFwmarkRange(sources: ConfigSources): Result<FwmarkRange, string> {
  const text = parseOption(AGENT_OPTIONS.fwmarkRange, sources);
  if (!text.ok) return text;
  const range = parseFwmarkRange(String(text.value ?? DEFAULT_FWMARK_RANGE));
  return range.ok ? range : fail(`--fwmark-range (or $${AGENT_OPTIONS.fwmarkRange.env}): ${range.error}`);
}

export function loadAgentConfig(sources: ConfigSources): Result<AgentConfig, string[]> {
  const parsed = parseConfig(AGENT_OPTIONS, sources);
  const range = loadFwmarkRange(sources);
  if (!parsed.ok) return range.ok ? parsed : fail([...parsed.error, range.error]);
  if (!range.ok) return fail([range.error]);
  return ok({ ...parsed.value, fwmarkRange: range.value });
}

/** What `conndrain agent --cleanup` needs (no node name, no kubeconfig): the mark range and the log level. */
export function loadAgentCleanupConfig(sources: ConfigSources): Result<Pick<AgentConfig, 'cleanup' | 'fwmarkRange' | 'logLevel'>, string[]> {
  const parsed = parseConfig({ cleanup: AGENT_OPTIONS.cleanup, logLevel: AGENT_OPTIONS.logLevel }, sources);
  const range = loadFwmarkRange(sources);
  if (!parsed.ok) return range.ok ? parsed : fail([...parsed.error, range.error]);
  if (!range.ok) return fail([range.error]);
  return ok({ ...parsed.value, fwmarkRange: range.value });
}
