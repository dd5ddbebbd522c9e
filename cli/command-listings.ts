/**
 * Every command's listing: its name, its description and what its parent's help shows after
 * the name. The rest of a command (options, action, subcommands) is in cli/commands/<name>.ts,
 * loaded only when the command runs or shows its own help (cli/lazy-command.ts). A new
 * command is one file there plus one listing here; cli/command-listings.test.ts checks that
 * a listing says what its definition does.
 */
import type { CommandListing } from './lazy-command.js';

/** The scenarios `conndrain lab` runs (lab/run.ts SCENARIOS; the compiled CLI cannot import the lab, cli/commands/lab.test.ts compares them). */
export const LAB_SCENARIOS = ['ghost', 'maglev-drift', 'dsr-node-loss'] as const;

export const INJECT: CommandListing = {
  name: 'inject',
  description: 'Rewrite Kubernetes manifests the way the webhook would mutate them: Pods get the preStop drain hook and grace period, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs get it in their pod template; other kinds pass through untouched. YAML (multi-document) or JSON; the result goes to stdout, warnings to stderr.',
  usage: '[options]',
  load: async () => (await import('./commands/inject.js')).defineInjectCommand,
};

export const REVIEW: CommandListing = {
  name: 'review',
  description: 'Read an admission.k8s.io/v1 AdmissionReview (JSON) on stdin and print the AdmissionReview response the webhook would send, patch included (base64 JSONPatch).',
  usage: '[options]',
  load: async () => (await import('./commands/review.js')).defineReviewCommand,
};

export const WEBHOOK: CommandListing = {
  name: 'webhook',
  description: 'Serve the mutating admission webhook over HTTPS: POST /mutate (admission.k8s.io/v1), GET /healthz, /readyz and /metrics. The certificate pair is read from --cert-dir (tls.crt, tls.key) and reloaded when it rotates. SIGTERM stops accepting, finishes in-flight requests and exits.',
  usage: '[options]',
  load: async () => (await import('./commands/webhook.js')).defineWebhookCommand,
};

export const AGENT: CommandListing = {
  name: 'agent',
  description: 'Run the node agent: drain API for preStop hooks, cluster-wide IPVS hold of draining pods, ghost conntrack cleanup',
  usage: '[options]',
  load: async () => (await import('./commands/agent.js')).defineAgentCommand,
};

export const CONNTRACK: CommandListing = {
  name: 'conntrack',
  description: 'read and delete conntrack entries over netlink (needs CAP_NET_ADMIN)',
  usage: '',
  load: async () => (await import('./commands/conntrack.js')).defineConntrackCommand,
};

/** `conndrain conntrack stale`, and `kubectl conndrain stale`. */
export const STALE: CommandListing = {
  name: 'stale',
  description: 'NAT\'ed conntrack entries whose DNAT target (reply source address:port) no endpoint owns and no live pod holds: ghost connections, grouped by service. Dry run unless --delete.',
  usage: '[options]',
  load: async () => (await import('./commands/stale.js')).defineStaleCommand,
};

export const IPVS: CommandListing = {
  name: 'ipvs',
  description: "the node's IPVS virtual services and real servers (generic netlink, no ipvsadm)",
  usage: '',
  load: async () => (await import('./commands/ipvs.js')).defineIpvsCommand,
};

export const LAB: CommandListing = {
  name: 'lab',
  description: `reproduce a field failure in network namespaces and measure it without and with conndrain (${LAB_SCENARIOS.join(', ')}); needs root`,
  usage: '[options] <scenario>',
  load: async () => (await import('./commands/lab.js')).defineLabCommand,
};

export const DEMO: CommandListing = {
  name: 'demo',
  description: 'the ghost-connection scenario before/after conndrain on this kernel, and the webhook injection on examples/deployment.yaml (needs root, under a minute)',
  usage: '',
  load: async () => (await import('./commands/lab.js')).defineDemoCommand,
};

export const DOCTOR: CommandListing = {
  name: 'doctor',
  description: 'Checks a node for what breaks drains and leaves ghost connections: conntrack fill and drops, timeouts, IPVS sysctls, the agent, stale entries.',
  usage: '[options]',
  load: async () => (await import('./commands/doctor.js')).defineDoctorCommand,
};

export const CHECK: CommandListing = {
  name: 'check',
  description: 'Checks the install from the API server, like `linkerd check`: the webhook configuration and its caBundle against the serving certificate, the webhook\'s ready endpoints, a ready agent on every node, matching versions, the opted-in namespaces. One line per check with its fix; exit 1 when one fails.',
  usage: '[options]',
  load: async () => (await import('./commands/check.js')).defineCheckCommand,
};

export const VERSION_COMMAND: CommandListing = {
  name: 'version',
  description: 'Print the version (the same as --version).',
  usage: '[options]',
  load: async () => (await import('./commands/version.js')).defineVersionCommand,
};

/** `conndrain`'s commands, in the order its help lists them. */
export const CONNDRAIN_LISTINGS: readonly CommandListing[] = [INJECT, REVIEW, WEBHOOK, AGENT, CONNTRACK, IPVS, LAB, DEMO, DOCTOR, CHECK, VERSION_COMMAND];

/** `kubectl conndrain`'s commands: the operator's, not the daemons or the lab. */
export const PLUGIN_LISTINGS: readonly CommandListing[] = [INJECT, REVIEW, STALE, DOCTOR, CHECK, VERSION_COMMAND];
