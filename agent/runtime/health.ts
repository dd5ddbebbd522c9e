/**
 * The health runnable: `/healthz`, `/readyz` and `/debug/holds` on the probes port (plain
 * HTTP, loopback by default) and `/metrics` on the metrics port (HTTPS and reviewed scrapes
 * with --metrics-secure). With SO_REUSEPORT listeners (the CLI) it first lets the kernel
 * migrate pending connections to a second agent on the same ports (net.ipv4.tcp_migrate_req).
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeConnection } from '../../kube/connection.js';
import type { AgentConfig } from '../../src/config/agent.js';
import type { FailureReport, Runnable } from '../runnable.js';
import { enableAcceptMigration } from '../handover/index.js';
import { closeListener, createHealthServer, listen } from './health-server.js';
import { createMetricsServer, type MetricsServer } from './metrics-server.js';

export type HealthConfig = Pick<AgentConfig, 'nodeName' | 'metricsAddress' | 'metricsPort' | 'metricsSecure' | 'metricsCertFile' | 'metricsKeyFile' | 'probesAddress' | 'probesPort'>;

export interface HealthOptions {
  config: HealthConfig;
  /** The API server that reviews scrapes (--metrics-secure). */
  kube: KubeConnection;
  logger: Logger;
  registry: Registry;
  ready: () => { ready: boolean; why: string };
  holds: () => unknown;
  listenSocket?: (host: string, port: number) => number;
  acceptMigrationSysctl?: string;
}

export class Health implements Runnable {
  readonly name = 'health';
  /** The metrics port it listens on (after start). */
  port = 0;
  /** The probes port it listens on (after start). */
  probesPort = 0;
  private readonly probes: Server;
  private metrics: MetricsServer | undefined;

  constructor(private readonly options: HealthOptions) {
    this.probes = createHealthServer({ ready: options.ready, holds: options.holds });
  }

  /** `failed`: a listener that errs after it listens (the kubelet's probes could no longer be answered). */
  async start(failed: FailureReport): Promise<void> {
    const { listenSocket, logger, acceptMigrationSysctl, config } = this.options;
    // Only with SO_REUSEPORT listeners (the CLI): tests that listen the ordinary way leave the node alone.
    if (listenSocket !== undefined) await enableAcceptMigration(logger, acceptMigrationSysctl);
    const metrics = this.metrics = await createMetricsServer({
      secure: config.metricsSecure, certFile: config.metricsCertFile, keyFile: config.metricsKeyFile,
      dnsNames: [config.nodeName, 'localhost'], kube: this.options.kube, registry: this.options.registry, logger,
    });
    this.probesPort = await listen(this.probes, config.probesPort, config.probesAddress, listenSocket);
    try {
      this.port = await listen(metrics, config.metricsPort, config.metricsAddress, listenSocket);
    } catch (error) {
      // A part that fails to start is not stopped by the others: the probes listener goes here.
      this.probes.close();
      throw error;
    }
    for (const server of [this.probes, metrics]) server.on('error', failed);
  }

  /** Handover: no new connections (they go to the other agent on the same ports). */
  stopAccepting(): void {
    closeListener(this.probes);
    if (this.metrics !== undefined) closeListener(this.metrics);
  }

  async stop(): Promise<void> {
    const servers = this.metrics === undefined ? [this.probes] : [this.probes, this.metrics];
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => {
      // The callback also comes (with an error) when the listener was already closed by a handover.
      server.close(() => resolve());
      server.closeAllConnections();
    })));
  }
}
