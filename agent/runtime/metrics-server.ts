/**
 * The agent's `/metrics` server. With --metrics-secure (the default) it is HTTPS, with the
 * configured certificate or a self-signed one made at start, and every scrape's bearer token
 * is reviewed by the API server (kube/metrics-auth); without it, plain HTTP for anyone (labs,
 * benches). A hostNetwork agent's metrics port is open on every node address: the review is
 * what keeps the node's figures to the scrapers RBAC allows.
 */
import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpServer } from '../../kube/node-http.js';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeConnection } from '../../kube/connection.js';
import { MetricsAccess } from '../../kube/metrics-auth/metrics-access.js';
import { serveMetrics } from '../../kube/metrics-auth/serve-metrics.js';
import { loadServingPair } from '../../kube/metrics-auth/serving-pair.js';

export interface MetricsServerOptions {
  secure: boolean;
  certFile: string;
  keyFile: string;
  /** Names of a self-signed certificate (the node name first). */
  dnsNames: readonly string[];
  kube: KubeConnection;
  registry: Registry;
  logger: Logger;
  /** How often configured certificate files are checked for a rotation (default 10 s). */
  reloadIntervalMs?: number;
}

export type MetricsServer = NetServer & { closeIdleConnections(): void; closeAllConnections(): void };

export async function createMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, logger } = options;
  const access = options.secure ? new MetricsAccess({ kube: options.kube, logger: logger.child({ part: 'metrics-access' }) }) : undefined;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://agent').pathname;
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(req.method !== 'GET' ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(req.method !== 'GET' ? 'only GET\n' : 'not found: /metrics (the probes are on the probes port)\n');
      return;
    }
    void serveMetrics(req, res, registry, logger, access);
  };
  if (!options.secure) return createHttpServer(handle);
  const pair = await loadServingPair({ certFile: options.certFile, keyFile: options.keyFile, dnsNames: options.dnsNames });
  logger.info({ certificate: pair.source }, 'metrics served over HTTPS, scrapes reviewed by the API server');
  const server = createHttpsServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, handle);
  // A failed handshake (a scanner, a plain-HTTP scrape) ends its socket and nothing else.
  server.on('tlsClientError', (_error: Error, socket) => socket.destroy());
  if (pair.source === 'files') {
    const stop = reloadOnChange(options.certFile, options.keyFile, options.reloadIntervalMs ?? 10_000, logger, (cert, key) => server.setSecureContext({ cert, key, minVersion: 'TLSv1.2' }));
    server.on('close', stop);
  }
  return server;
}

/**
 * Configured certificate files rotate (cert-manager, a mounted Secret): their modification
 * times are compared every `intervalMs` and a changed pair is swapped in for new connections.
 * A pair that cannot be read or used keeps the previous one serving, with a warning.
 */
function reloadOnChange(certFile: string, keyFile: string, intervalMs: number, logger: Logger, apply: (cert: string, key: string) => void): () => void {
  const stamp = (): string => {
    try {
      return `${statSync(certFile).mtimeMs}/${statSync(keyFile).mtimeMs}`;
    } catch {
      return 'unreadable';
    }
  };
  let last = stamp();
  const timer = setInterval(() => {
    const now = stamp();
    if (now === last || now === 'unreadable') return;
    last = now;
    try {
      apply(readFileSync(certFile, 'utf8'), readFileSync(keyFile, 'utf8'));
      logger.info({ certFile }, 'metrics certificate reloaded');
    } catch (error) {
      logger.warn({ err: error, certFile }, 'metrics certificate not reloaded: the previous one keeps serving');
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
