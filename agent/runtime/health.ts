/**
 * The health runnable: `/metrics`, `/healthz`, `/readyz` and `/debug/holds` on the metrics
 * port. With SO_REUSEPORT listeners (the CLI) it first lets the kernel migrate pending
 * connections to a second agent on the same ports (net.ipv4.tcp_migrate_req).
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Runnable } from '../runnable.js';
import { enableAcceptMigration } from './accept-migration.js';
import { closeListener, createHealthServer, listen } from './health-server.js';

export interface HealthOptions {
  port: number;
  address: string;
  logger: Logger;
  registry: Registry;
  ready: () => { ready: boolean; why: string };
  holds: () => unknown;
  listenSocket?: (host: string, port: number) => number;
  acceptMigrationSysctl?: string;
}

export class Health implements Runnable {
  readonly name = 'health';
  /** The port it listens on (after start). */
  port = 0;
  private readonly server: Server;

  constructor(private readonly options: HealthOptions) {
    this.server = createHealthServer({ registry: options.registry, ready: options.ready, logger: options.logger, holds: options.holds });
  }

  async start(): Promise<void> {
    const { listenSocket, logger, acceptMigrationSysctl } = this.options;
    // Only with SO_REUSEPORT listeners (the CLI): tests that listen the ordinary way leave the node alone.
    if (listenSocket !== undefined) await enableAcceptMigration(logger, acceptMigrationSysctl);
    this.port = await listen(this.server, this.options.port, this.options.address, listenSocket);
  }

  /** Handover: no new connections (they go to the other agent on the same port). */
  stopAccepting(): void {
    closeListener(this.server);
  }

  stop(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
