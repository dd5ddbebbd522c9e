/**
 * `--tls-mode=self-signed`: the webhook provides its own certificate instead of cert-manager.
 * On start, before the server listens, every replica:
 *   1. reads the Secret `--tls-secret`; if absent, generates a CA and serving pair and creates
 *      it (create-if-absent: when two replicas race, the API server accepts the first create
 *      and answers 409 to the other, which then reads the winner's Secret); a Secret whose pair
 *      is expired, unusable or lacks one of the Service's DNS names is replaced (update with
 *      its resourceVersion, so a concurrent replacement is not overwritten);
 *   2. writes tls.crt/tls.key into --cert-dir (an emptyDir), where the usual CertificateSource
 *      reads them;
 *   3. sets the caBundle of every webhook of its own MutatingWebhookConfiguration that points
 *      at its Service (a JSON patch guarded by `test` ops on the webhook names).
 * The RBAC this needs: get/update of that one Secret, create of Secrets in the namespace
 * (create cannot be narrowed to a name), get/patch of that one MutatingWebhookConfiguration.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { AdmissionregistrationV1Api, CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.js';
import { generateServingPair } from './generate.js';
import { validatePair } from './pair.js';
import { caBundlePatch } from './ca-bundle.js';

export interface SelfSignedOptions {
  /** A kubeconfig file; in-cluster (service account) when empty. */
  kubeconfig: string;
  namespace: string;
  secretName: string;
  webhookConfigurationName: string;
  serviceName: string;
  certDir: string;
  validityDays: number;
  logger: Logger;
  now?: () => Date;
}

export interface SelfSignedResult {
  /** What this replica did with the Secret. */
  secret: 'created' | 'read' | 'replaced';
  serial: string;
  /** Webhooks whose caBundle was changed (0 when it was already right). */
  caBundlesPatched: number;
}

interface Clients {
  core: CoreV1Api;
  admission: AdmissionregistrationV1Api;
  jsonPatch: unknown;
}

interface StoredPair {
  caCert: string;
  cert: string;
  key: string;
}

/** The in-cluster DNS names of a Service, as the API server dials it. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

async function connect(kubeconfig: string): Promise<Clients> {
  // Loaded only in this mode: the library's API clients cost tens of MB of heap.
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (kubeconfig === '') kc.loadFromCluster();
  else kc.loadFromFile(kubeconfig);
  return {
    core: kc.makeApiClient(k8s.CoreV1Api),
    admission: kc.makeApiClient(k8s.AdmissionregistrationV1Api),
    jsonPatch: k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
  };
}

function decode(secret: V1Secret): StoredPair | undefined {
  const data = secret.data ?? {};
  const [caCert, cert, key] = ['ca.crt', 'tls.crt', 'tls.key'].map((k) => Buffer.from(data[k] ?? '', 'base64').toString('utf8'));
  if (caCert === undefined || cert === undefined || key === undefined || caCert === '' || cert === '' || key === '') return undefined;
  return { caCert, cert, key };
}

/** Why a stored pair cannot serve (undefined when it can). */
function problemOf(pair: StoredPair | undefined, dnsNames: readonly string[], now: Date): string | undefined {
  if (pair === undefined) return 'ca.crt, tls.crt or tls.key is missing';
  const checked = validatePair(Buffer.from(pair.cert), Buffer.from(pair.key), now);
  if (!checked.ok) return checked.error;
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(pair.caCert);
  } catch (error) {
    return `ca.crt is not a PEM certificate: ${(error as Error).message}`;
  }
  const serving = new X509Certificate(pair.cert);
  if (!serving.verify(ca.publicKey)) return 'tls.crt is not signed by ca.crt';
  const missing = dnsNames.filter((name) => serving.checkHost(name, { wildcards: false }) === undefined);
  if (missing.length > 0) return `tls.crt does not name ${missing.join(', ')}`;
  return undefined;
}

function secretBody(options: SelfSignedOptions, pair: StoredPair, resourceVersion?: string): V1Secret {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: options.secretName,
      namespace: options.namespace,
      labels: { 'app.kubernetes.io/name': 'conndrain', 'app.kubernetes.io/component': 'webhook' },
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    data: { 'ca.crt': b64(pair.caCert), 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key) },
  };
}

async function readSecret(clients: Clients, options: SelfSignedOptions): Promise<V1Secret | undefined> {
  try {
    return await clients.core.readNamespacedSecret({ name: options.secretName, namespace: options.namespace });
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

async function ensureSecret(clients: Clients, options: SelfSignedOptions, now: Date): Promise<{ pair: StoredPair; secret: SelfSignedResult['secret'] }> {
  const dnsNames = serviceDnsNames(options.serviceName, options.namespace);
  const fresh = async (): Promise<StoredPair> => generateServingPair({ dnsNames, now, validityDays: options.validityDays });
  const existing = await readSecret(clients, options);
  if (existing === undefined) {
    const pair = await fresh();
    try {
      await clients.core.createNamespacedSecret({ namespace: options.namespace, body: secretBody(options, pair) });
      return { pair, secret: 'created' };
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      // Another replica created it first: use theirs.
      const winner = await readSecret(clients, options);
      const theirs = winner === undefined ? undefined : decode(winner);
      const problem = problemOf(theirs, dnsNames, now);
      if (theirs === undefined || problem !== undefined) throw new Error(`Secret ${options.namespace}/${options.secretName} created by another replica is unusable: ${problem ?? 'gone'}`);
      return { pair: theirs, secret: 'read' };
    }
  }
  const stored = decode(existing);
  const problem = problemOf(stored, dnsNames, now);
  if (stored !== undefined && problem === undefined) return { pair: stored, secret: 'read' };
  options.logger.warn({ secret: `${options.namespace}/${options.secretName}`, problem }, 'the stored serving certificate cannot serve; replacing it');
  const pair = await fresh();
  try {
    await clients.core.replaceNamespacedSecret({ name: options.secretName, namespace: options.namespace, body: secretBody(options, pair, existing.metadata?.resourceVersion) });
    return { pair, secret: 'replaced' };
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
    // Another replica replaced it first (our resourceVersion is stale): use theirs.
    const again = await readSecret(clients, options);
    const theirs = again === undefined ? undefined : decode(again);
    const stillWrong = problemOf(theirs, dnsNames, now);
    if (theirs === undefined || stillWrong !== undefined) throw new Error(`Secret ${options.namespace}/${options.secretName} is unusable after a concurrent replacement: ${stillWrong ?? 'gone'}`);
    return { pair: theirs, secret: 'read' };
  }
}

/** Writes tls.crt and tls.key so that a reader never sees half a file (temporary names, then rename). */
async function writePair(dir: string, pair: StoredPair): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, text, mode] of [['tls.key', pair.key, 0o600], ['tls.crt', pair.cert, 0o644]] as const) {
    const tmp = join(dir, `.${name}.tmp`);
    await writeFile(tmp, text, { mode });
    await rename(tmp, join(dir, name));
  }
}

async function patchCaBundles(clients: Clients, options: SelfSignedOptions, caCert: string): Promise<number> {
  const name = options.webhookConfigurationName;
  for (let attempt = 1; ; attempt++) {
    const current = await clients.admission.readMutatingWebhookConfiguration({ name });
    const ops = caBundlePatch(current, { service: options.serviceName, namespace: options.namespace, caBundle: Buffer.from(caCert).toString('base64') });
    if (ops.length === 0) return 0;
    try {
      await clients.admission.patchMutatingWebhookConfiguration({ name, body: ops }, clients.jsonPatch as never);
      return ops.filter((op) => op.op !== 'test').length;
    } catch (error) {
      // 422: a `test` failed because the list changed under us; read again (a few times).
      if (statusOf(error) !== 422 || attempt >= 3) throw error;
    }
  }
}

/** Makes sure a usable serving pair exists (Secret, files, caBundle). Throws with the API server's error. */
export async function bootstrapSelfSigned(options: SelfSignedOptions): Promise<SelfSignedResult> {
  const now = (options.now ?? ((): Date => new Date()))();
  const clients = await connect(options.kubeconfig);
  const { pair, secret } = await ensureSecret(clients, options, now);
  await writePair(options.certDir, pair);
  const caBundlesPatched = await patchCaBundles(clients, options, pair.caCert);
  const serial = new X509Certificate(pair.cert).serialNumber;
  options.logger.info({ secret: `${options.namespace}/${options.secretName}`, action: secret, serial, webhookConfiguration: options.webhookConfigurationName, caBundlesPatched }, 'self-signed serving certificate ready');
  return { secret, serial, caBundlesPatched };
}
