/**
 * The comparison server "ours via Express": the webhook's own /mutate handler
 * (createMutateHandler with the drain-hook injection, the same metrics, limits, body budget and
 * logger) mounted as an Express route, the way the other paths of the real server are served.
 * The real server has one route for /mutate, straight from node:https, because this one costs
 * more; it exists only to keep measuring that choice, so it lives in bench/, not behind an
 * option of the production server.
 */
import { createServer, type Server } from 'node:https';
import express, { type Request, type Response } from 'express';
import type { InjectConfig } from '../../src/config/webhook.js';
import type { Logger } from '../../log/logger.js';
import { DrainHookInjection } from '../../webhook/admission/drain-hook.js';
import { AdmissionSummary } from '../../webhook/http/admission-summary.js';
import { BodyBudget } from '../../webhook/http/body-budget.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../webhook/http/limits.js';
import { createMutateHandler } from '../../webhook/http/mutate.js';
import { createWebhookMetrics } from '../../webhook/metrics.js';
import { pooledRandom } from '../../webhook/random.js';
import { MIN_TLS_VERSION } from '../../webhook/tls/pair.js';

export interface ExpressMutateServer {
  server: Server;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1, port 0 (read it from `server.address()`). */
export async function startExpressMutateServer(options: { cert: Buffer; key: Buffer; config: InjectConfig; logger: Logger }): Promise<ExpressMutateServer> {
  const limits = DEFAULT_CONNECTION_LIMITS;
  const summary = new AdmissionSummary(options.logger, 60_000);
  const mutate = createMutateHandler({
    handler: new DrainHookInjection({ config: options.config, random: pooledRandom() }),
    logger: options.logger,
    metrics: createWebhookMetrics(),
    limits,
    budget: new BodyBudget(limits.bodyBudgetBytes),
    summary,
    closing: () => false,
  });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.all('/mutate', (req: Request, res: Response) => mutate(req, res));
  const server = createServer({ cert: options.cert, key: options.key, minVersion: MIN_TLS_VERSION, handshakeTimeout: limits.handshakeTimeoutMs });
  server.headersTimeout = limits.headersTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('request', app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = (): Promise<void> => new Promise((resolve) => {
    summary.stop();
    server.close(() => resolve());
    server.closeAllConnections();
  });
  return { server, close };
}
