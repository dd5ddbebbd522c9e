/**
 * The checks of `kubectl conndrain check`, pure: each takes what the runner read from the API
 * server (or why it could not) and says ok, fail (with the fix) or info.
 */
import { LABEL_MANAGED, MANAGED_SELECTOR, NAMESPACE_INJECT_LABEL, NAMESPACE_INJECT_VALUE } from '../contract.js';
import { caBundleProblem } from './ca-bundle.js';
import { nodeSelectedBy } from './node-selection.js';
import { failed, ok, type CheckResult, type KubeJson } from './types.js';
import { workloadVersionOf } from './version.js';

/** What the runner read: the value, or the API server's answer when it was not a 2xx. */
export type Fetched<T> = { ok: true; value: T } | { ok: false; error: string };

/** The Service a webhook configuration sends admissions to. */
export interface WebhookService {
  namespace: string;
  name: string;
}

interface WebhookEntry {
  name?: string;
  clientConfig?: { caBundle?: string; service?: { namespace?: string; name?: string } };
}

function webhooksOf(config: KubeJson): WebhookEntry[] {
  return Array.isArray(config.webhooks) ? (config.webhooks as WebhookEntry[]) : [];
}

/** The Service of the configuration's first webhook that names one. */
export function webhookServiceOf(config: KubeJson | undefined): WebhookService | undefined {
  const service = webhooksOf(config ?? {}).find((w) => w.clientConfig?.service?.name !== undefined)?.clientConfig?.service;
  return service?.name === undefined ? undefined : { namespace: service.namespace ?? 'default', name: service.name };
}

function apiFailure(id: string, what: string, error: string): CheckResult {
  return failed(id, `cannot read ${what}: ${error}`, 'check the kubeconfig, the context and your RBAC (get/list on the objects named)');
}

export function checkWebhookConfiguration(name: string, config: Fetched<KubeJson | undefined>): CheckResult {
  const id = 'webhook.configuration';
  if (!config.ok) return apiFailure(id, `MutatingWebhookConfiguration ${name}`, config.error);
  if (config.value === undefined) return failed(id, `MutatingWebhookConfiguration ${name} not found`, 'install conndrain: kubectl apply -k manifests/ (docs/install.md)');
  const service = webhookServiceOf(config.value);
  const count = webhooksOf(config.value).length;
  if (service === undefined) return failed(id, `MutatingWebhookConfiguration ${name} has no webhook calling a Service`, 're-apply the install files: its clientConfig.service was removed');
  return ok(id, `MutatingWebhookConfiguration ${name}: ${count} webhook${count === 1 ? '' : 's'} -> Service ${service.namespace}/${service.name}`);
}

/** Every webhook's caBundle must verify the certificate in the serving Secret, for the Service's name. */
export function checkCaBundle(config: Fetched<KubeJson | undefined>, secretName: string, secret: Fetched<KubeJson | undefined>, now: Date): CheckResult {
  const id = 'webhook.ca-bundle';
  if (!config.ok || config.value === undefined) return failed(id, 'no webhook configuration to check', 'fix the webhook configuration first');
  const service = webhookServiceOf(config.value);
  if (service === undefined) return failed(id, 'no webhook calls a Service', 'fix the webhook configuration first');
  if (!secret.ok) return apiFailure(id, `Secret ${service.namespace}/${secretName}`, secret.error);
  if (secret.value === undefined) {
    return failed(id, `Secret ${service.namespace}/${secretName} (the webhook's serving pair) not found`, 'cert-manager has not issued it yet: kubectl describe certificate -n ' + service.namespace);
  }
  const data = (secret.value.data ?? {}) as Record<string, string>;
  const serving = Buffer.from(data['tls.crt'] ?? '', 'base64').toString('utf8');
  const dnsName = `${service.name}.${service.namespace}.svc`;
  const problems: string[] = [];
  for (const webhook of webhooksOf(config.value)) {
    const bundle = Buffer.from(webhook.clientConfig?.caBundle ?? '', 'base64').toString('utf8');
    const problem = bundle.trim() === '' ? 'empty caBundle' : caBundleProblem(bundle, serving, dnsName, now);
    if (problem !== undefined) problems.push(`${webhook.name ?? '(unnamed)'}: ${problem}`);
  }
  if (problems.length > 0) {
    return failed(id, `caBundle does not verify the serving certificate of ${dnsName}`, 'cert-manager cainjector sets the caBundle (annotation cert-manager.io/inject-ca-from); check it runs, or restart the webhook in self-signed mode', problems);
  }
  return ok(id, `caBundle verifies the serving certificate of ${dnsName} (Secret ${secretName})`);
}

/** Ready endpoints behind the webhook's Service (an endpoint without a ready condition is ready, as in the API). */
export function checkWebhookEndpoints(service: WebhookService | undefined, slices: Fetched<KubeJson[]>): CheckResult {
  const id = 'webhook.endpoints';
  if (service === undefined) return failed(id, 'no webhook Service to check', 'fix the webhook configuration first');
  if (!slices.ok) return apiFailure(id, `EndpointSlices of ${service.namespace}/${service.name}`, slices.error);
  let ready = 0;
  let total = 0;
  for (const slice of slices.value) {
    for (const endpoint of (slice.endpoints ?? []) as Array<{ conditions?: { ready?: boolean } }>) {
      total += 1;
      if (endpoint.conditions?.ready !== false) ready += 1;
    }
  }
  if (ready === 0) {
    return failed(id, `Service ${service.namespace}/${service.name} has no ready endpoint (${total} not ready)`, `kubectl -n ${service.namespace} get pods -l app.kubernetes.io/component=webhook; kubectl -n ${service.namespace} logs deploy/conndrain-webhook`);
  }
  return ok(id, `Service ${service.namespace}/${service.name}: ${ready} ready endpoint${ready === 1 ? '' : 's'}${total > ready ? ` (${total - ready} not ready)` : ''}`);
}

function podReady(pod: KubeJson): boolean {
  const conditions = ((pod.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions) ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A Ready agent pod on every node the DaemonSet selects; the nodes without one named. */
export function checkAgents(daemonSetName: string, namespace: string, daemonSet: Fetched<KubeJson | undefined>, nodes: Fetched<KubeJson[]>, pods: Fetched<KubeJson[]>): CheckResult {
  const id = 'agent.nodes';
  if (!daemonSet.ok) return apiFailure(id, `DaemonSet ${namespace}/${daemonSetName}`, daemonSet.error);
  if (daemonSet.value === undefined) return failed(id, `DaemonSet ${namespace}/${daemonSetName} not found`, 'install conndrain: kubectl apply -k manifests/ (docs/install.md)');
  if (!nodes.ok) return apiFailure(id, 'the nodes', nodes.error);
  if (!pods.ok) return apiFailure(id, 'the agent pods', pods.error);
  const status = (daemonSet.value.status ?? {}) as { desiredNumberScheduled?: number; numberReady?: number };
  const readyNodes = new Set(pods.value.filter(podReady).map((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName));
  const podNodes = new Set(pods.value.map((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName));
  const selected = nodes.value.filter((n) => nodeSelectedBy(daemonSet.value ?? {}, n));
  const lacking = selected.filter((n) => !readyNodes.has(n.metadata?.name)).map((n) => `${n.metadata?.name ?? '?'}: ${podNodes.has(n.metadata?.name) ? 'agent not ready' : 'no agent pod'}`);
  const counts = `${status.numberReady ?? 0}/${status.desiredNumberScheduled ?? 0} ready`;
  if (lacking.length > 0) {
    return failed(id, `${lacking.length} of ${selected.length} node${selected.length === 1 ? '' : 's'} without a ready agent (DaemonSet ${counts})`, `kubectl -n ${namespace} describe ds/${daemonSetName}; a pod that cannot schedule names the taint or the resource`, lacking);
  }
  return ok(id, `a ready agent on each of ${selected.length} node${selected.length === 1 ? '' : 's'} (DaemonSet ${counts})`);
}

/** The webhook, the agent and this CLI are one release. */
export function checkVersions(deployment: Fetched<KubeJson | undefined>, daemonSet: Fetched<KubeJson | undefined>, cliVersion: string): CheckResult {
  const id = 'versions';
  if (!deployment.ok) return apiFailure(id, 'the webhook Deployment', deployment.error);
  if (!daemonSet.ok) return apiFailure(id, 'the agent DaemonSet', daemonSet.error);
  if (deployment.value === undefined || daemonSet.value === undefined) return failed(id, 'the webhook Deployment or the agent DaemonSet is missing', 'install conndrain: kubectl apply -k manifests/ (docs/install.md)');
  const webhook = workloadVersionOf(deployment.value).version ?? 'unknown';
  const agent = workloadVersionOf(daemonSet.value).version ?? 'unknown';
  const line = `webhook ${webhook}, agent ${agent}, CLI ${cliVersion}`;
  if (webhook !== agent || agent !== cliVersion) {
    return failed(id, `versions differ: ${line}`, 'apply one release\'s install files to both, and use the CLI of that release (docs/upgrade.md)');
  }
  return ok(id, `one version: ${line}`);
}

/** The opted-in namespaces and how many pods the webhook manages: information, not a verdict. */
export function describeOptIn(namespaces: Fetched<KubeJson[]>, managed: Fetched<number>): CheckResult {
  const id = 'namespaces.opted-in';
  if (!namespaces.ok) return apiFailure(id, `namespaces labelled ${NAMESPACE_INJECT_LABEL}=${NAMESPACE_INJECT_VALUE}`, namespaces.error);
  if (!managed.ok) return apiFailure(id, `pods labelled ${MANAGED_SELECTOR}`, managed.error);
  const names = namespaces.value.map((n) => n.metadata?.name ?? '?').sort();
  const pods = `${managed.value} pod${managed.value === 1 ? '' : 's'} managed (${LABEL_MANAGED})`;
  if (names.length === 0) {
    return { id, status: 'info', summary: `no namespace opted in; ${pods}`, fix: `kubectl label namespace NAME ${NAMESPACE_INJECT_LABEL}=${NAMESPACE_INJECT_VALUE}` };
  }
  return { id, status: 'info', summary: `${names.length} namespace${names.length === 1 ? '' : 's'} opted in; ${pods}`, details: names };
}
