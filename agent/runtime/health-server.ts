/**
 * `/healthz` (the process serves), `/readyz` (first list synced, drain API up) and
 * `/debug/holds` on the probes port: plain HTTP, loopback by default (the kubelet's probes say
 * `host: 127.0.0.1`). `/metrics` has its own server (metrics-server.ts).
 */
import { closeSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from '../../kube/node-http.js';
import type { Server as NetServer } from 'node:net';

export interface HealthServerOptions {
  ready: () => { ready: boolean; why: string };
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
    if (path === '/debug/holds' && options.holds !== undefined) return text(200, `${JSON.stringify(options.holds())}\n`, 'application/json');
    return text(404, 'not found: /healthz, /readyz, /debug/holds (/metrics is on the metrics port)\n');
  });
  return server;
}

/**
 * Listens on `host`:`port`; with `listenSocket` on the descriptor it returns (SO_REUSEPORT:
 * a second agent on the node can bind the same port; Node calls listen() on it again, which
 * is harmless). A descriptor that Node did not take over is closed here.
 */
export async function listen(server: NetServer, port: number, host: string, listenSocket?: (host: string, port: number) => number): Promise<number> {
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
export function closeListener(server: NetServer & { closeIdleConnections(): void }): void {
  if (!server.listening) return;
  server.close();
  server.closeIdleConnections();
}
