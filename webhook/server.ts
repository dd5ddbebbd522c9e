import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { WebhookConfig } from '../src/config/webhook.js';
import type { RandomSource } from '../src/inject/index.js';
import type { Logger } from '../log/logger.js';
import { DrainHookInjection } from './admission/drain-hook.js';
import { AdmissionSummary } from './http/admission-summary.js';
import { BodyBudget } from './http/body-budget.js';
import { ConnectionTracker } from './http/connections.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './http/limits.js';
import { checkRequestHead } from './http/hygiene.js';
import { createMutateHandler } from './http/mutate.js';
import { statusBody } from './http/status.js';
import type { MetricsAccess } from '../kube/metrics-auth/metrics-access.js';
import { serveMetrics } from '../kube/metrics-auth/serve-metrics.js';
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
   * Who may read /metrics (--metrics-secure: TokenReview + SubjectAccessReview); anyone when
   * absent (tests, bench). The CLI passes one unless --metrics-secure=false.
   */
  metricsAccess?: MetricsAccess;
  /** Timeouts and the body budget (tests shorten them); DEFAULT_CONNECTION_LIMITS otherwise. */
  limits?: Partial<ConnectionLimits>;
  /** How often the info summary of admissions is logged (default 60 s). */
  summaryIntervalMs?: number;
}

export interface RunningWebhook {
  server: Server;
  port: number;
  metrics: WebhookMetrics;
  certificates: CertificateSource;
  /** Result of the first certificate load (the server listens even without a pair; /readyz says so). */
  firstLoad: ReloadResult;
  /** TCP sockets open now (handshakes in progress included). */
  connections(): number;
  /**
   * The shutdown sequence: /readyz turns 503 and everything keeps being served for
   * shutdownDelayMs (the endpoint removal reaches the API servers), then the listener closes,
   * idle keep-alive connections are closed and answers carry `Connection: close`, in-flight
   * requests finish, and at shutdownTimeoutMs after the delay every socket still open (TLS
   * handshakes included) is destroyed. Resolves when the server is closed.
   */
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
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  /** SIGTERM received: /readyz 503, everything else as usual. */
  let draining = false;
  /** The delay is over: no new connections, answers close their connection. */
  let closing = false;

  const server = createServer({ minVersion: MIN_TLS_VERSION, handshakeTimeout: limits.handshakeTimeoutMs, connectionsCheckingInterval: limits.checkIntervalMs });
  server.headersTimeout = limits.headersTimeoutMs;
  // requestTimeout is kept as a backstop; on Node 20 it stops applying once the headers are
  // complete, so the body has its own deadlines in readBody.
  server.requestTimeout = limits.headersTimeoutMs + limits.bodyTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Per replica; docs/webhook-operations.md has the arithmetic against the memory limit.
  server.maxConnections = config.maxConnections;
  const sockets = new ConnectionTracker();
  server.on('connection', (socket: Socket) => sockets.add(socket));
  server.on('drop', () => logger.debug({ maxConnections: config.maxConnections }, 'connection refused: --max-connections reached'));
  const budget = new BodyBudget(limits.bodyBudgetBytes);
  const summary = new AdmissionSummary(logger, options.summaryIntervalMs ?? 60_000);
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
  app.get('/healthz', (_req: Request, res: Response) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req: Request, res: Response) => {
    if (draining) res.status(503).type('text/plain').send('shutting down');
    else if (!certificates.isValid()) res.status(503).type('text/plain').send(`no valid certificate in ${config.certDir}`);
    else res.type('text/plain').send('ok');
  });
  app.get('/metrics', (req: Request, res: Response) => {
    void serveMetrics(req, res, metrics.registry, logger, options.metricsAccess);
  });
  app.use((req: Request, res: Response) => {
    res.status(404).json(statusBody(404, 'not-found', `no route ${req.method} ${req.path}; the webhook serves POST /mutate, GET /healthz, /readyz and /metrics`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err: error, path: req.path }, 'unhandled error in a route');
    if (!res.headersSent) res.status(500).json(statusBody(500, 'internal-error', 'conndrain webhook internal error'));
  });
  // One route for /mutate, straight from node:https: the API server calls it for every pod
  // creation in opted-in namespaces, and Express's routing and req/res decoration cost more CPU
  // per request than the whole bare node:https answer (bench/webhook measures both; the
  // figures and their command: docs/benchmarks.md). The path is matched exactly, with any query
  // string (the API server appends ?timeout=10s), as the webhook configuration names it;
  // Express serves everything else, and answers any other path with 404.
  const handler = new DrainHookInjection({ config, random });
  const mutate = createMutateHandler({ handler, logger, metrics, limits, budget, summary, closing: () => closing });
  const isMutate = (req: IncomingMessage): boolean => req.url === '/mutate' || req.url?.startsWith('/mutate?') === true;
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    if (isMutate(req)) {
      if (closing) res.on('finish', () => server.closeIdleConnections());
      void mutate(req, res);
      return;
    }
    app(req, res);
  };
  server.on('request', dispatch);
  // `Expect: 100-continue`: invite the body only when it would be read. A refusal decided on
  // the head (413, 415, 405) is answered at once, without the 100 that would start the upload.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!isMutate(req) || checkRequestHead(req) === undefined) res.writeContinue();
    dispatch(req, res);
  });
  // A failed or timed-out handshake (handshakeTimeout) ends its socket: nothing else would.
  server.on('tlsClientError', (error: Error, socket: Socket) => {
    logger.debug({ err: error }, 'TLS handshake failed');
    socket.destroy();
  });

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
  const stop = (resolve: () => void): void => {
    closing = true;
    logger.info({ connections: sockets.size, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown: no new connections, closing idle ones, finishing in-flight requests');
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      const destroyed = sockets.destroyAll();
      logger.warn({ shutdownTimeoutMs: config.shutdownTimeoutMs, destroyed }, 'shutdown timeout: closed the remaining connections');
    }, config.shutdownTimeoutMs);
    // close() stops the listener and (Node >= 19) closes idle keep-alive connections; busy
    // ones close after their answer (Connection: close, then closeIdleConnections).
    server.close(() => {
      clearTimeout(deadline);
      summary.stop();
      logger.info('webhook stopped');
      logger.flush();
      resolve();
    });
    server.closeIdleConnections();
  };
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      draining = true;
      certificates.stop();
      logger.info({ shutdownDelayMs: config.shutdownDelayMs }, 'shutdown: /readyz now 503, still serving while the endpoint removal propagates');
      if (config.shutdownDelayMs <= 0) stop(resolve);
      else setTimeout(() => stop(resolve), config.shutdownDelayMs);
    });
    return closed;
  };
  return { server, port, metrics, certificates, firstLoad, connections: () => sockets.size, close };
}
