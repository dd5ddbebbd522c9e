/** `/metrics`, `/healthz` (the process serves) and `/readyz` (first list synced, drain API up) on their own port. */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface HealthServerOptions {
  registry: Registry;
  ready: () => { ready: boolean; why: string };
  logger: Logger;
  /** Extra read-only JSON for operators (`/debug/holds`). */
  holds?: () => unknown;
}

export function createHealthServer(options: HealthServerOptions): Server {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://agent').pathname;
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return text(405, 'only GET\n');
    if (path === '/healthz') return text(200, 'ok\n');
    if (path === '/readyz') {
      const r = options.ready();
      return text(r.ready ? 200 : 503, `${r.why}\n`);
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (body) => text(200, body, options.registry.contentType),
        (error: unknown) => {
          options.logger.error({ err: error }, 'metrics collection failed');
          text(500, 'metrics collection failed\n');
        },
      );
      return undefined;
    }
    if (path === '/debug/holds' && options.holds !== undefined) return text(200, `${JSON.stringify(options.holds())}\n`, 'application/json');
    return text(404, 'not found: /metrics, /healthz, /readyz\n');
  });
  return server;
}

export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}
