import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../log/logger.js';
import { createTestCa, installPair, issueServingPair } from '../../test/webhook/certs.js';
import { createWebhookMetrics } from '../metrics.js';
import { CertificateSource } from './cert-source.js';
import { validatePair, type CertificatePair } from './pair.js';

const ca = createTestCa();
const dirs: string[] = [];
after(() => {
  ca.cleanup();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const a = issueServingPair(ca);
const b = issueServingPair(ca);

test('validatePair: a matching, current pair is accepted with its serial and validity', () => {
  const result = validatePair(Buffer.from(a.cert), Buffer.from(a.key), new Date());
  assert.equal(result.ok, true);
  if (result.ok) {
    assert.equal(result.value.serialNumber, a.serial);
    assert.ok(result.value.notAfter.getTime() > Date.now());
  }
});

test('validatePair: every broken pair is refused with a sentence saying why', () => {
  const now = new Date();
  const cases: Array<[string, Buffer, Buffer, Date, RegExp]> = [
    ['key of another certificate', Buffer.from(a.cert), Buffer.from(b.key), now, new RegExp(`tls.key does not match the certificate \\(serial ${a.serial}\\)`)],
    ['not a certificate', Buffer.from('hello'), Buffer.from(a.key), now, /tls.crt is not a PEM certificate/],
    ['not a key', Buffer.from(a.cert), Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), now, /tls.key is not a usable private key/],
    ['expired', Buffer.from(a.cert), Buffer.from(a.key), new Date(Date.now() + 3 * 86_400_000), /expired at/],
    ['not yet valid', Buffer.from(a.cert), Buffer.from(a.key), new Date(Date.now() - 86_400_000), /is not valid before/],
  ];
  for (const [name, cert, key, at, why] of cases) {
    const result = validatePair(cert, key, at);
    assert.equal(result.ok, false, name);
    if (!result.ok) assert.match(result.error, why, name);
  }
});

function source(dir: string, now: () => Date, onPair: (p: CertificatePair) => void = () => undefined): { source: CertificateSource; logs: string[]; metrics: ReturnType<typeof createWebhookMetrics> } {
  const logs: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _e, done): void { logs.push(chunk.toString()); done(); } });
  const metrics = createWebhookMetrics({ processMetrics: false });
  return { source: new CertificateSource({ dir, pollIntervalMs: 60_000, logger: createLogger({ level: 'debug', component: 'test', destination: sink }), metrics, onPair, now }), logs, metrics };
}

test('the source loads, ignores unchanged files, and readiness follows the certificate validity', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdwh-src-'));
  dirs.push(dir);
  installPair(dir, a);
  let now = new Date();
  const installed: string[] = [];
  const s = source(dir, () => now, (p) => installed.push(p.serialNumber));
  assert.equal(await s.source.reload(), 'loaded');
  assert.equal(await s.source.reload(), 'unchanged');
  assert.deepEqual(installed, [a.serial]);
  assert.equal(s.source.isValid(), true);
  now = new Date(Date.now() + 3 * 86_400_000);
  assert.equal(s.source.isValid(), false, 'an expired serving certificate makes the webhook unready');
  const metrics = await s.metrics.registry.getSingleMetricAsString('conndrain_webhook_certificate_reloads_total');
  assert.match(metrics, /result="success"\} 1/);
});

test('a pair that fails to install keeps the old one and is counted once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdwh-src-'));
  dirs.push(dir);
  installPair(dir, a);
  let fail = false;
  const s = source(dir, () => new Date(), () => { if (fail) throw new Error('setSecureContext refused'); });
  assert.equal(await s.source.reload(), 'loaded');
  fail = true;
  installPair(dir, b);
  assert.equal(await s.source.reload(), 'rejected');
  assert.equal(await s.source.reload(), 'unchanged');
  assert.equal(s.source.current()?.serialNumber, a.serial);
  const metrics = await s.metrics.registry.getSingleMetricAsString('conndrain_webhook_certificate_reloads_total');
  assert.match(metrics, /result="failure"\} 1/);
  assert.ok(s.logs.some((l) => l.includes('could not install the certificate pair')));
  fail = false;
  installPair(dir, issueServingPair(ca));
  assert.equal(await s.source.reload(), 'loaded');
});
