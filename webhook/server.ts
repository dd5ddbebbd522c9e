import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { WebhookConfig } from '../src/config/webhook.js';
import type { RandomSource } from '../src/inject/index.js';
import type { Logger } from '../src/logging.js';
import { statusBody } from './admission/answer.js';
import { createMutateHandler } from './http/mutate.js';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.js';
import { CertificateSource, type ReloadResult } from './tls/cert-source.js';
import { MIN_TLS_VERSION } from './tls/pair.js';
import { pooledRandom } from './random.js';

export interface WebhookServerOptions {
  config: WebhookConfig;
  logger: Logger;
  /** Source of drain-id bytes; crypto random (pooled) unless a test passes a seeded one. */
  random?: RandomSource;
  metrics?: WebhookMetrics;
  /**
   * Route POST /mutate through Express like the other paths (default false: /mutate is
   * dispatched before Express, see below). Kept for the benchmark's side-by-side figures.
   */
  mutateThroughExpress?: boolean;
}

export interface RunningWebhook {
  server: Server;
  port: number;
  metrics: WebhookMetrics;
  certificates: CertificateSource;
  /** Result of the first certificate load (the server listens even without a pair; /readyz says so). */
  firstLoad: ReloadResult;
  /** Stops accepting, lets in-flight requests finish (at most shutdownTimeoutMs), then resolves. */
  close(): Promise<void>;
}

/**
 * The webhook's HTTPS server: `POST /mutate`, `/healthz`, `/readyz` (false while no valid
 * certificate, or once shutdown began), `/metrics`. TLS 1.2+ only; the certificate comes from
 * `--cert-dir` and is swapped with setSecureContext on rotation, without a restart.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhook> {
  const { config, logger } = options;
  const metrics = options.metrics ?? createWebhookMetrics();
  const random = options.random ?? pooledRandom();
  let closing = false;

  const server = createServer({ minVersion: MIN_TLS_VERSION });
  // The API server waits at most 30 s for a webhook; a body still arriving after that is abandoned.
  server.requestTimeout = 30_000;
  const certificates = new CertificateSource({
    dir: config.certDir,
    pollIntervalMs: config.certPollIntervalMs,
    logger: logger.child({ part: 'certificates' }),
    metrics,
    onPair: (pair) => server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: MIN_TLS_VERSION }),
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (closing) {
      res.setHeader('Connection', 'close');
      res.on('finish', () => server.closeIdleConnections());
    }
    next();
  });
  const mutate = createMutateHandler({ config, random, logger, metrics, closing: () => closing });
  app.all('/mutate', (req: Request, res: Response) => mutate(req, res));
  app.get('/healthz', (_req: Request, res: Response) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req: Request, res: Response) => {
    if (closing) res.status(503).type('text/plain').send('shutting down');
    else if (!certificates.isValid()) res.status(503).type('text/plain').send(`no valid certificate in ${config.certDir}`);
    else res.type('text/plain').send('ok');
  });
  app.get('/metrics', async (_req: Request, res: Response) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.use((req: Request, res: Response) => {
    res.status(404).json(statusBody(404, 'not-found', `no route ${req.method} ${req.path}; the webhook serves POST /mutate, GET /healthz, /readyz and /metrics`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err: error, path: req.path }, 'unhandled error in a route');
    if (!res.headersSent) res.status(500).json(statusBody(500, 'internal-error', 'conndrain webhook internal error'));
  });
  // /mutate is the hot path: the API server calls it for every pod creation in opted-in
  // namespaces. Express's routing and req/res decoration cost more CPU per request than the
  // whole bare node:https answer (bench/webhook: GET /healthz through Express 306 us vs 81 us
  // CPU for the bare server on this machine), which alone puts the 0.7x throughput goal out
  // of reach. So /mutate (with any query string: the API server appends ?timeout=10s) is
  // answered by the same handler straight from node:https; Express serves everything else.
  const throughExpress = options.mutateThroughExpress === true;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!throughExpress && (req.url === '/mutate' || req.url?.startsWith('/mutate?') === true)) {
      if (closing) res.on('finish', () => server.closeIdleConnections());
      void mutate(req, res);
      return;
    }
    app(req, res);
  });
  server.on('tlsClientError', (error: Error) => logger.debug({ err: error }, 'TLS handshake failed'));

  const firstLoad = await certificates.start();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ address: config.address, port, certDir: config.certDir, certificate: certificates.current()?.serialNumber ?? null }, 'webhook listening');
  logger.flush();

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      certificates.stop();
      const deadline = setTimeout(() => {
        logger.warn({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown timeout: closing the remaining connections');
        server.closeAllConnections();
      }, config.shutdownTimeoutMs);
      server.close(() => {
        clearTimeout(deadline);
        logger.info('webhook stopped');
        logger.flush();
        resolve();
      });
      server.closeIdleConnections();
    });
    return closed;
  };
  return { server, port, metrics, certificates, firstLoad, close };
}
