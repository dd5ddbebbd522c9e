/**
 * Answers one `GET /metrics` on a node:http(s) request: with a MetricsAccess, only after the
 * scrape's token is allowed; without one (--metrics-secure=false), to anyone. Works for the
 * agent's bare server and for the webhook's (Express hands over the same objects).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { MetricsAccess } from './metrics-access.js';

function sendText(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

export async function serveMetrics(req: IncomingMessage, res: ServerResponse, registry: Registry, logger: Logger, access: MetricsAccess | undefined): Promise<void> {
  if (access !== undefined) {
    const decision = await access.authorize(req.headers.authorization);
    if (decision.status === 401) return sendText(res, 401, `Unauthorized: ${decision.why}\n`, { 'www-authenticate': 'Bearer realm="conndrain metrics"' });
    if (decision.status === 403) return sendText(res, 403, `Forbidden: ${decision.why}\n`);
    if (decision.status === 503) return sendText(res, 503, `Service Unavailable: ${decision.why}\n`, { 'retry-after': '5' });
  }
  try {
    const body = await registry.metrics();
    if (res.headersSent || res.destroyed) return undefined;
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(body);
  } catch (error) {
    logger.error({ err: error }, 'metrics collection failed');
    sendText(res, 500, 'metrics collection failed\n');
  }
  return undefined;
}
