/**
 * Builds the agent's KubeConnection: from a kubeconfig file, or in-cluster from the service
 * account (server from KUBERNETES_SERVICE_HOST/PORT, handed in by the config loader). A
 * kubeconfig user the lean connection does not speak (exec plugin, auth provider) or a proxy
 * loads `@kubernetes/client-node`'s full KubeConfig instead (lazily: its RSS cost is in
 * docs/design/agent.md).
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { LeanKubeConnection, type KubeConnection, type LeanAuth, type LeanTls } from './connection.js';

export interface KubeSource {
  /** A kubeconfig file; in-cluster when undefined or empty. */
  kubeconfig?: string | undefined;
  /** The kubeconfig's context to use (kubectl's --context); its current-context when undefined or empty. */
  context?: string | undefined;
  /** $KUBERNETES_SERVICE_HOST / $KUBERNETES_SERVICE_PORT (in-cluster). */
  serviceHost?: string | undefined;
  servicePort?: string | undefined;
  /** The service account directory (tests). */
  serviceAccountDir?: string;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Named<T> = Array<{ name?: string } & T>;
interface KubeconfigFile {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>;
  clusters?: Named<{ cluster?: Record<string, unknown> }>;
  users?: Named<{ user?: Record<string, unknown> }>;
}

/** Fields of a kubeconfig user the lean connection handles; any other one means "use the library". */
const LEAN_USER_FIELDS = new Set(['token', 'tokenFile', 'username', 'password', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);
const LEAN_CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions']);

export async function loadKubeConnection(source: KubeSource): Promise<KubeConnection> {
  if (source.kubeconfig === undefined || source.kubeconfig === '') return inCluster(source);
  const lean = await fromKubeconfig(source.kubeconfig, source.context);
  return lean ?? loadFullKubeConfig(source);
}

/** The library's KubeConfig for the same source (API clients of the janitor, unusual auth). */
export async function loadFullKubeConfig(source: KubeSource): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (source.kubeconfig !== undefined && source.kubeconfig !== '') kc.loadFromFile(source.kubeconfig);
  else kc.loadFromCluster();
  if (source.context !== undefined && source.context !== '') kc.setCurrentContext(source.context);
  return kc;
}

function inCluster(source: KubeSource): KubeConnection {
  const { serviceHost: host, servicePort: port } = source;
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset (pass --kubeconfig)');
  }
  const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new LeanKubeConnection(server, { ca: readFileSync(join(dir, 'ca.crt')) }, { kind: 'tokenFile', path: join(dir, 'token') });
}

function pick<T>(list: Named<T> | undefined, name: string | undefined, what: string): T {
  const found = (list ?? []).find((x) => x.name === name);
  if (found === undefined) throw new Error(`kubeconfig: no ${what} named ${String(name)}`);
  return found;
}

function fileOrData(base: string, entry: Record<string, unknown>, field: string): Buffer | undefined {
  const data = entry[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  const file = entry[field];
  if (typeof file === 'string' && file !== '') return readFileSync(isAbsolute(file) ? file : join(base, file));
  return undefined;
}

/** A lean connection, or undefined when the kubeconfig needs the library (exec, auth-provider, proxy). */
async function fromKubeconfig(path: string, contextName: string | undefined): Promise<KubeConnection | undefined> {
  const text = readFileSync(path, 'utf8');
  const { parse } = await import('yaml');
  const doc = (parse(text) ?? {}) as KubeconfigFile;
  const context = pick(doc.contexts, contextName !== undefined && contextName !== '' ? contextName : doc['current-context'], 'context').context ?? {};
  const cluster = pick(doc.clusters, context.cluster, 'cluster').cluster ?? {};
  const user = context.user === undefined ? {} : (pick(doc.users, context.user, 'user').user ?? {});
  if (Object.keys(user).some((k) => !LEAN_USER_FIELDS.has(k)) || Object.keys(cluster).some((k) => !LEAN_CLUSTER_FIELDS.has(k))) return undefined;
  const base = dirname(path);
  const server = cluster.server;
  if (typeof server !== 'string' || server === '') throw new Error(`kubeconfig ${path}: the cluster has no server`);
  const tls: LeanTls = {
    ca: fileOrData(base, cluster, 'certificate-authority'),
    cert: fileOrData(base, user, 'client-certificate'),
    key: fileOrData(base, user, 'client-key'),
    ...(cluster['insecure-skip-tls-verify'] === true ? { rejectUnauthorized: false } : {}),
    ...(typeof cluster['tls-server-name'] === 'string' ? { servername: cluster['tls-server-name'] } : {}),
  };
  let auth: LeanAuth = { kind: 'none' };
  if (typeof user.token === 'string' && user.token !== '') auth = { kind: 'token', token: user.token };
  else if (typeof user.tokenFile === 'string' && user.tokenFile !== '') auth = { kind: 'tokenFile', path: isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile) };
  else if (typeof user.username === 'string') auth = { kind: 'basic', username: user.username, password: typeof user.password === 'string' ? user.password : '' };
  return new LeanKubeConnection(server, tls, auth);
}
