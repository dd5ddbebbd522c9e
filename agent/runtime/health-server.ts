/** `/metrics`, `/healthz` (the process serves) and `/readyz` (first list synced, drain API up) on their own port. */
import { closeSync } from 'node:fs';
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

/**
 * Listens on `host`:`port`; with `listenSocket` on the descriptor it returns (SO_REUSEPORT:
 * a second agent on the node can bind the same port; Node calls listen() on it again, which
 * is harmless). A descriptor that Node did not take over is closed here.
 */
export async function listen(server: Server, port: number, host: string, listenSocket?: (host: string, port: number) => number): Promise<number> {
  const fd = listenSocket?.(host, port);
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error): void => {
      if (fd !== undefined) closeSync(fd);
      reject(error);
    };
    server.once('error', failed);
    const done = (): void => {
      server.off('error', failed);
      resolve();
    };
    if (fd === undefined) server.listen(port, host, done);
    else server.listen({ fd }, done);
  });
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}

/** Stops accepting (the listening socket closes now); open connections finish on their own. */
export function closeListener(server: Server): void {
  if (!server.listening) return;
  server.close();
  server.closeIdleConnections();
}
