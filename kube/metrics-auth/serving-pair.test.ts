/**
 * The self-signed certificate of the agent's /metrics, made with node:crypto and src/x509:
 * signed by its own key, read alike by OpenSSL (node's parser) and by an independent decoder
 * (@peculiar/x509, the webhook's library), and served over a real TLS handshake.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { generateSelfSigned, loadServingPair } from './serving-pair.js';

const NOW = new Date('2026-12-07T12:00:00Z');

test('the certificate is signed by the key it comes with, for its names and its days', async () => {
  const pair = await generateSelfSigned(['node-7', 'localhost'], NOW, 365);
  const cert = new X509Certificate(pair.cert);
  assert.equal(cert.verify(cert.publicKey), true, 'self-signed: its own key verifies it');
  assert.equal(cert.checkPrivateKey(createPrivateKey(pair.key)), true);
  assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.equal(cert.subject, 'CN=node-7');
  assert.equal(cert.subjectAltName, 'DNS:node-7, DNS:localhost');
  assert.equal(new Date(cert.validFrom).getTime(), NOW.getTime() - 60_000, 'a minute back, for clocks a little behind');
  assert.equal(new Date(cert.validTo).getTime(), NOW.getTime() + 365 * 86_400_000);
  assert.ok(/^[0-7]/.test(cert.serialNumber) && cert.serialNumber.length === 32, cert.serialNumber);
  const other = new X509Certificate((await generateSelfSigned(['node-7'], NOW, 365)).cert);
  assert.notEqual(other.serialNumber, cert.serialNumber);
  assert.equal(other.verify(cert.publicKey), false, 'each certificate has a key of its own');
});

test('an independent decoder reads the same extensions, with their criticality', async () => {
  const parsed = new x509.X509Certificate((await generateSelfSigned(['node-7'], NOW, 1)).cert);
  const basic = parsed.getExtension(x509.BasicConstraintsExtension);
  assert.equal(basic?.ca, false);
  assert.equal(basic.critical, true);
  const usages = parsed.getExtension(x509.KeyUsagesExtension);
  assert.equal(usages?.usages, x509.KeyUsageFlags.digitalSignature);
  assert.equal(usages.critical, true);
  assert.deepEqual([...(parsed.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])], [x509.ExtendedKeyUsage.serverAuth]);
  assert.deepEqual(parsed.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON(), [{ type: 'dns', value: 'node-7' }]);
  assert.equal((parsed.signatureAlgorithm as { name?: string }).name, 'ECDSA');
});

test('a TLS client that trusts the certificate completes a handshake for its name', async () => {
  const pair = await generateSelfSigned(['metrics.node-7.example'], new Date(), 1);
  const server = createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const get = (servername: string): Promise<string> =>
    new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, servername, ca: pair.cert, path: '/', agent: false }, (res) => {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
  try {
    assert.equal(await get('metrics.node-7.example'), 'ok');
    await assert.rejects(get('other.example'), /altnames|ERR_TLS_CERT_ALTNAME_INVALID/);
  } finally {
    server.close();
  }
});

test('configured files are served as they are; one without the other is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cd-serving-pair-'));
  try {
    const made = await generateSelfSigned(['files.example'], NOW, 1);
    writeFileSync(join(dir, 'tls.crt'), made.cert);
    writeFileSync(join(dir, 'tls.key'), made.key);
    const pair = await loadServingPair({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), dnsNames: ['unused'] });
    assert.deepEqual(pair, { ...made, source: 'files' });
    await assert.rejects(loadServingPair({ certFile: join(dir, 'tls.crt'), dnsNames: [] }), /both/);
    const generated = await loadServingPair({ dnsNames: [] });
    assert.equal(generated.source, 'self-signed');
    assert.equal(new X509Certificate(generated.cert).subject, 'CN=localhost');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
