/** Starts the real webhook server over HTTPS for tests, with a test CA and a kubelet-style cert dir. */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest, Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { DEFAULT_INJECT_CONFIG, type WebhookConfig } from '../../src/config/webhook.js';
import { seededRandom, type RandomSource } from '../../src/inject/index.js';
import { createLogger } from '../../log/logger.js';
import type { MetricsAccess } from '../../kube/metrics-auth/metrics-access.js';
import type { ConnectionLimits } from '../../webhook/http/limits.js';
import { startWebhookServer, type RunningWebhook } from '../../webhook/server.js';
import { createTestCa, installPair, issueServingPair, type ServingPair, type TestCa } from './certs.js';

export interface TestWebhook {
  running: RunningWebhook;
  ca: TestCa;
  certDir: string;
  pair: ServingPair | undefined;
  logs: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startTestWebhook(options: { withCert?: boolean; random?: RandomSource; config?: Partial<WebhookConfig>; limits?: Partial<ConnectionLimits>; metricsAccess?: MetricsAccess } = {}): Promise<TestWebhook> {
  const ca = createTestCa();
  const certDir = mkdtempSync(join(tmpdir(), 'cdwh-certs-'));
  const pair = options.withCert === false ? undefined : issueServingPair(ca);
  if (pair !== undefined) installPair(certDir, pair);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done): void {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config: WebhookConfig = {
    ...DEFAULT_INJECT_CONFIG,
    address: '127.0.0.1',
    port: 0,
    certDir,
    certPollIntervalMs: 100,
    shutdownDelayMs: 0,
    shutdownTimeoutMs: 5000,
    maxConnections: 256,
    logLevel: 'debug',
    ...options.config,
  };
  const running = await startWebhookServer({ config, logger: createLogger({ level: config.logLevel, component: 'webhook', destination: sink }), random: options.random ?? seededRandom(11), limits: options.limits, metricsAccess: options.metricsAccess });
  return {
    running, ca, certDir, pair, logs,
    stop: async () => {
      await running.close();
      rmSync(certDir, { recursive: true, force: true });
      ca.cleanup();
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
  peerSerial: string;
}

/** One HTTPS request trusting only the test CA (servername localhost). */
export function send(
  web: TestWebhook,
  options: { method?: string; path?: string; body?: string | Buffer; headers?: Record<string, string | number>; agent?: Agent | false; chunked?: boolean },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1',
      servername: 'localhost',
      port: web.running.port,
      method: options.method ?? 'POST',
      path: options.path ?? '/mutate',
      ca: web.ca.caCert,
      agent: options.agent ?? false,
      headers: { 'Content-Type': 'application/json', ...options.headers },
    }, (res) => {
      const socket = res.socket as TLSSocket;
      const peerSerial = socket.getPeerCertificate().serialNumber ?? '';
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, peerSerial });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

export function review(object: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object,
      dryRun: false,
      ...extra,
    },
  });
}

export function samplePod(annotations: Record<string, string> = { 'conndrain.io/drain': '30s' }): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'checkout-7d9f8b6c5d-', namespace: 'shop', labels: { app: 'checkout' }, annotations },
    spec: { containers: [{ name: 'app', image: 'registry.example/checkout:1.4.2', ports: [{ containerPort: 8080 }] }] },
  };
}
