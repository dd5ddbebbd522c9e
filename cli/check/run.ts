/**
 * `kubectl conndrain check`: reads the install from the API server and prints one line per
 * check (webhook configuration, caBundle against the serving certificate, webhook endpoints,
 * an agent on every node, versions, opted-in namespaces), with the fix of each failure.
 * Exit 0 when nothing failed, 1 when a check failed or the API server cannot be reached.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConnection } from '../../kube/connection.js';
import { checkAgents, checkCaBundle, checkVersions, checkWebhookConfiguration, checkWebhookEndpoints, describeOptIn, webhookServiceOf, type Fetched } from '../../src/check/checks.js';
import type { CheckResult } from '../../src/check/types.js';
import { MANAGED_SELECTOR, NAMESPACE_INJECT_LABEL, NAMESPACE_INJECT_VALUE } from '../../src/contract.js';
import { ApiUnreachable, readList, readObject } from './reads.js';
import { CliExit } from '../exit.js';
import { VERSION } from '../version.js';

export interface CheckFlags {
  kubeconfig?: string;
  context?: string;
  /** The webhook's namespace (-n). */
  namespace: string;
  /** The agent's namespace. */
  agentNamespace: string;
  webhookConfiguration: string;
  tlsSecret: string;
  json?: boolean;
}

const AGENT_DAEMONSET = 'conndrain-agent';
const WEBHOOK_DEPLOYMENT = 'conndrain-webhook';

/** The kubeconfig kubectl would use: --kubeconfig, the first file of $KUBECONFIG, ~/.kube/config; in-cluster when none exists. */
function kubeconfigPath(flags: CheckFlags): string | undefined {
  if (flags.kubeconfig !== undefined) return flags.kubeconfig;
  const fromEnv = process.env.KUBECONFIG?.split(':').find((p) => p !== '' && existsSync(p));
  if (fromEnv !== undefined) return fromEnv;
  const home = join(homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

async function connect(flags: CheckFlags): Promise<KubeConnection> {
  const kubeconfig = kubeconfigPath(flags);
  const source = { kubeconfig, serviceHost: process.env.KUBERNETES_SERVICE_HOST, servicePort: process.env.KUBERNETES_SERVICE_PORT };
  if (flags.context === undefined) {
    const { loadKubeConnection } = await import('../../kube/load.js');
    return loadKubeConnection(source);
  }
  // Another context than the current one: the library's KubeConfig picks it.
  const { loadFullKubeConfig } = await import('../../kube/load.js');
  const kc = await loadFullKubeConfig(source);
  if (kc.getContextObject(flags.context) === null) throw new Error(`no context "${flags.context}" in ${kubeconfig ?? 'the in-cluster config'}`);
  kc.setCurrentContext(flags.context);
  return kc;
}

function count(list: Fetched<unknown[]>): Fetched<number> {
  return list.ok ? { ok: true, value: list.value.length } : list;
}

export async function runChecks(kube: KubeConnection, flags: CheckFlags, now = new Date()): Promise<CheckResult[]> {
  const ns = encodeURIComponent(flags.namespace);
  const agentNs = encodeURIComponent(flags.agentNamespace);
  const config = await readObject(kube, `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(flags.webhookConfiguration)}`);
  const service = config.ok ? webhookServiceOf(config.value) : undefined;
  const serviceNs = encodeURIComponent(service?.namespace ?? flags.namespace);
  const [secret, slices, daemonSet, deployment, nodes, agentPods, namespaces, managed] = await Promise.all([
    readObject(kube, `/api/v1/namespaces/${serviceNs}/secrets/${encodeURIComponent(flags.tlsSecret)}`),
    service === undefined ? Promise.resolve<Fetched<never[]>>({ ok: true, value: [] }) : readList(kube, `/apis/discovery.k8s.io/v1/namespaces/${serviceNs}/endpointslices`, { labelSelector: `kubernetes.io/service-name=${service.name}` }),
    readObject(kube, `/apis/apps/v1/namespaces/${agentNs}/daemonsets/${AGENT_DAEMONSET}`),
    readObject(kube, `/apis/apps/v1/namespaces/${ns}/deployments/${WEBHOOK_DEPLOYMENT}`),
    readList(kube, '/api/v1/nodes'),
    readList(kube, `/api/v1/namespaces/${agentNs}/pods`, { labelSelector: 'app.kubernetes.io/name=conndrain,app.kubernetes.io/component=agent' }),
    readList(kube, '/api/v1/namespaces', { labelSelector: `${NAMESPACE_INJECT_LABEL}=${NAMESPACE_INJECT_VALUE}` }),
    readList(kube, '/api/v1/pods', { labelSelector: MANAGED_SELECTOR }),
  ]);
  return [
    checkWebhookConfiguration(flags.webhookConfiguration, config),
    checkCaBundle(config, flags.tlsSecret, secret, now),
    checkWebhookEndpoints(service, slices),
    checkAgents(AGENT_DAEMONSET, flags.agentNamespace, daemonSet, nodes, agentPods),
    checkVersions(deployment, daemonSet, VERSION),
    describeOptIn(namespaces, count(managed)),
  ];
}

const MARK = { ok: 'ok  ', fail: 'FAIL', info: 'info' } as const;

/** The human form: one line per check, its details and its fix indented below it. */
export function formatChecks(results: readonly CheckResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`[${MARK[r.status]}] ${r.id}: ${r.summary}`);
    for (const d of r.details ?? []) lines.push(`         ${d}`);
    if (r.fix !== undefined && r.status !== 'ok') lines.push(`         fix: ${r.fix}`);
  }
  const failedCount = results.filter((r) => r.status === 'fail').length;
  const passed = results.filter((r) => r.status === 'ok').length;
  lines.push(failedCount === 0 ? `all ${passed} checks passed` : `${failedCount} check${failedCount === 1 ? '' : 's'} failed, ${passed} passed`);
  return `${lines.join('\n')}\n`;
}

export async function runCheck(flags: CheckFlags): Promise<void> {
  let kube: KubeConnection;
  try {
    kube = await connect(flags);
  } catch (error) {
    throw new CliExit(1, `conndrain check: cannot load the kubeconfig: ${(error as Error).message}`);
  }
  let results: CheckResult[];
  try {
    results = await runChecks(kube, flags);
  } catch (error) {
    if (error instanceof ApiUnreachable) throw new CliExit(1, `conndrain check: cannot reach the API server: ${error.message}`);
    throw error;
  }
  const failedAny = results.some((r) => r.status === 'fail');
  if (flags.json === true) process.stdout.write(`${JSON.stringify({ ok: !failedAny, version: VERSION, namespace: flags.namespace, agentNamespace: flags.agentNamespace, checks: results }, null, 2)}\n`);
  else process.stdout.write(formatChecks(results));
  if (failedAny) throw new CliExit(1);
}
