/**
 * The webhook's /metrics with --metrics-secure over its real HTTPS port (the cert-manager
 * pair in --cert-dir): scrapes reviewed by the API stand-in (test/apiserver/reviews.ts);
 * /mutate and the probes are not affected. The last test runs `conndrain webhook` itself, as
 * the Deployment does (--metrics-secure is on by default, --kubeconfig reaches the stand-in).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LeanKubeConnection } from '../../kube/connection.js';
import { MetricsAccess } from '../../kube/metrics-auth/metrics-access.js';
import { FakeApiServer } from '../apiserver/server.js';
import { freePort } from '../free-port.js';
import { scrape } from '../scrape.js';
import { createTestCa, installPair, issueServingPair } from './certs.js';
import { review, samplePod, send, startTestWebhook } from './harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const api = new FakeApiServer();
before(async () => {
  await api.start();
  api.reviews.allow('prometheus-token', 'system:serviceaccount:monitoring:prometheus');
  api.reviews.deny('nosy-token', 'system:serviceaccount:shop:web');
});
after(() => api.close());

test('webhook /metrics: 200 allowed, 401 without token, 403 denied, 503 while the API fails; /mutate and /readyz unaffected', async () => {
  const metricsAccess = new MetricsAccess({ kube: new LeanKubeConnection(api.url, {}, { kind: 'token', token: 'webhook-token' }), logger: pino({ level: 'silent' }) });
  const web = await startTestWebhook({ metricsAccess });
  try {
    const port = web.running.port;
    const ca = web.ca.caCert;
    const allowed = await scrape(port, '/metrics', { token: 'prometheus-token', ca });
    assert.equal(allowed.status, 200);
    assert.match(allowed.body, /conndrain_webhook_/);
    assert.equal((await scrape(port, '/metrics', { ca })).status, 401);
    const denied = await scrape(port, '/metrics', { token: 'nosy-token', ca });
    assert.equal(denied.status, 403);
    assert.doesNotMatch(denied.body, /conndrain_/);
    api.reviews.failWith(503);
    try {
      assert.equal((await scrape(port, '/metrics', { token: 'new-token', ca })).status, 503);
    } finally {
      api.reviews.failWith(undefined);
    }
    assert.equal((await send(web, { method: 'GET', path: '/readyz' })).status, 200);
    assert.equal((await send(web, { body: review(samplePod()) })).status, 200);
    assert.equal((await scrape(port, '/metrics', { token: 'prometheus-token', ca })).status, 200, 'still serving');
  } finally {
    await web.stop();
  }
});

test('conndrain webhook: --metrics-secure by default, reviewed through --kubeconfig; an unreachable API server gives 503, not a crash', async () => {
  const ca = createTestCa();
  const dir = mkdtempSync(join(tmpdir(), 'cdwh-metrics-'));
  installPair(dir, issueServingPair(ca));
  const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'webhook', '--cert-dir', dir, '--port', String(port), '--address', '127.0.0.1', '--shutdown-delay', '0s', '--kubeconfig', kubeconfig], { cwd: ROOT });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  try {
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('webhook listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.match(stdout, /webhook listening/);
    assert.equal((await scrape(port, '/metrics', { ca: ca.caCert })).status, 401);
    assert.equal((await scrape(port, '/metrics', { token: 'prometheus-token', ca: ca.caCert })).status, 200);
    await api.close();
    assert.equal((await scrape(port, '/metrics', { token: 'unseen-token', ca: ca.caCert })).status, 503);
    assert.equal(child.exitCode, null, 'still running');
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    ca.cleanup();
  }
});
