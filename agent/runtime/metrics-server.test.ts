/** The agent's metrics server with configured certificate files: served, and swapped when the files rotate. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { LeanKubeConnection } from '../../kube/connection.js';
import { generateSelfSigned } from '../../kube/metrics-auth/serving-pair.js';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { scrape } from '../../test/scrape.js';
import { createMetricsServer } from './metrics-server.js';
import { listen } from './health-server.js';

test('configured certificate files are served and reloaded when they rotate', async () => {
  const api = new FakeApiServer();
  await api.start();
  api.reviews.allow('prometheus-token', 'prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'cd-metrics-cert-'));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  const install = (pair: { cert: string; key: string }): void => {
    writeFileSync(certFile, pair.cert);
    writeFileSync(keyFile, pair.key);
  };
  const first = await generateSelfSigned(['first.example'], new Date(), 1);
  install(first);
  const server = await createMetricsServer({
    secure: true, certFile, keyFile, dnsNames: ['unused'], kube: new LeanKubeConnection(api.url, {}, { kind: 'none' }),
    registry: new Registry(), logger: pino({ level: 'silent' }), reloadIntervalMs: 50,
  });
  try {
    const port = await listen(server, 0, '127.0.0.1');
    const before = await scrape(port, '/metrics', { token: 'prometheus-token' });
    assert.equal(before.status, 200);
    assert.equal(before.certificate.serialNumber, new X509Certificate(first.cert).serialNumber);
    const second = await generateSelfSigned(['second.example'], new Date(), 1);
    await new Promise((r) => setTimeout(r, 20));
    install(second);
    const wanted = new X509Certificate(second.cert).serialNumber;
    const deadline = Date.now() + 5000;
    let served = '';
    while (Date.now() < deadline) {
      served = (await scrape(port, '/metrics', { token: 'prometheus-token' })).certificate.serialNumber;
      if (served === wanted) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(served, wanted);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
