/**
 * --tls-mode=self-signed against the API stand-in (test/apiserver: Secrets and
 * MutatingWebhookConfigurations over HTTP, the real wire format, through
 * @kubernetes/client-node), and the generated certificate against a real TLS client that
 * verifies it with the CA from the caBundle.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FakeApiServer } from '../../test/apiserver/server.js';
import { createLogger } from '../../log/logger.js';
import { generateServingPair } from './generate.js';
import { bootstrapSelfSigned, serviceDnsNames, type SelfSignedOptions } from './self-signed.js';

const NS = 'conndrain-system';

function webhookConfiguration(): Record<string, unknown> {
  const webhook = (name: string, service: string): Record<string, unknown> => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { service: { name: service, namespace: NS, path: '/mutate', port: 443 } },
  });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'conndrain' },
    webhooks: [webhook('pods.conndrain.io', 'conndrain-webhook'), webhook('other.example.com', 'someone-else'), webhook('workloads.conndrain.io', 'conndrain-webhook')],
  };
}

function caBundles(api: FakeApiServer): (string | undefined)[] {
  const mwc = api.plain.getMutatingWebhookConfiguration('conndrain') as { webhooks: Array<{ clientConfig: { caBundle?: string } }> };
  return mwc.webhooks.map((w) => w.clientConfig.caBundle);
}

function secretPem(api: FakeApiServer, key: string): string {
  const data = (api.plain.getSecret(NS, 'conndrain-webhook-tls') as { data: Record<string, string> }).data;
  return Buffer.from(data[key] ?? '', 'base64').toString('utf8');
}

describe('webhook --tls-mode=self-signed', () => {
  const api = new FakeApiServer();
  let kubeconfig = '';
  const dirs: string[] = [];
  const options = (certDir: string, now?: () => Date): SelfSignedOptions => ({
    kubeconfig,
    namespace: NS,
    secretName: 'conndrain-webhook-tls',
    webhookConfigurationName: 'conndrain',
    serviceName: 'conndrain-webhook',
    certDir,
    validityDays: 365,
    logger: createLogger({ level: 'silent', component: 'test' }),
    ...(now === undefined ? {} : { now }),
  });
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'cdss-'));
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    await api.start();
    kubeconfig = api.writeKubeconfig(join(tempDir(), 'kubeconfig'));
  });
  after(async () => {
    await api.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    api.plain.putMutatingWebhookConfiguration(webhookConfiguration());
  });

  it('two replicas starting together: one creates the Secret, both serve the same pair, the caBundle is set on its own webhooks only', async () => {
    const [a, b] = [tempDir(), tempDir()];
    const results = await Promise.all([bootstrapSelfSigned(options(a)), bootstrapSelfSigned(options(b))]);
    assert.deepEqual(results.map((r) => r.secret).sort(), ['created', 'read']);
    assert.equal(results[0]?.serial, results[1]?.serial);
    assert.equal(readFileSync(join(a, 'tls.crt'), 'utf8'), readFileSync(join(b, 'tls.crt'), 'utf8'));
    assert.equal(readFileSync(join(a, 'tls.key'), 'utf8'), secretPem(api, 'tls.key'));
    const ca = Buffer.from(secretPem(api, 'ca.crt')).toString('base64');
    assert.deepEqual(caBundles(api), [ca, undefined, ca]);
    const serving = new X509Certificate(readFileSync(join(a, 'tls.crt')));
    assert.ok(serving.verify(new X509Certificate(secretPem(api, 'ca.crt')).publicKey));
    for (const name of serviceDnsNames('conndrain-webhook', NS)) assert.equal(serving.checkHost(name), name);
  });

  it('a restart reuses the Secret and leaves a correct caBundle alone', async () => {
    const first = await bootstrapSelfSigned(options(tempDir()));
    const creates = api.plain.secretCreates;
    const again = await bootstrapSelfSigned(options(tempDir()));
    assert.equal(again.secret, 'read');
    assert.equal(again.serial, first.serial);
    assert.equal(again.caBundlesPatched, 0);
    assert.equal(api.plain.secretCreates, creates, 'no create attempted when the Secret exists');
  });

  it('replaces a Secret whose certificate has expired', async () => {
    const old = await bootstrapSelfSigned(options(tempDir()));
    const later = new Date(Date.now() + 400 * 86_400_000);
    const renewed = await bootstrapSelfSigned(options(tempDir(), () => later));
    assert.equal(renewed.secret, 'replaced');
    assert.notEqual(renewed.serial, old.serial);
    assert.deepEqual(caBundles(api)[0], Buffer.from(secretPem(api, 'ca.crt')).toString('base64'));
  });

  it('replaces a Secret that does not name the Service (e.g. left from another install)', async () => {
    const stray = await generateServingPair({ dnsNames: ['elsewhere.example'], now: new Date(), validityDays: 30 });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    api.plain.putSecret({ metadata: { name: 'conndrain-webhook-tls', namespace: NS }, type: 'kubernetes.io/tls', data: { 'ca.crt': b64(stray.caCert), 'tls.crt': b64(stray.cert), 'tls.key': b64(stray.key) } });
    const result = await bootstrapSelfSigned(options(tempDir()));
    assert.equal(result.secret, 'replaced');
  });

  it('fails with the API server\'s answer when the MutatingWebhookConfiguration is missing', async () => {
    const custom = { ...options(tempDir()), webhookConfigurationName: 'absent' };
    await assert.rejects(bootstrapSelfSigned(custom), (error: Error & { code?: number }) => error.code === 404);
  });

  describe('the generated certificate, through a real TLS handshake', () => {
    let server: Server;
    let ca = '';
    before(async () => {
      const dir = tempDir();
      await bootstrapSelfSigned(options(dir));
      ca = secretPem(api, 'ca.crt');
      server = createServer({ cert: readFileSync(join(dir, 'tls.crt')), key: readFileSync(join(dir, 'tls.key')), minVersion: 'TLSv1.2' }, (socket) => socket.end('ok'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const handshake = (servername: string, trusted: string): Promise<{ authorized: boolean; error?: string }> =>
      new Promise((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: trusted }, () => {
          resolve({ authorized: socket.authorized });
          socket.destroy();
        });
        socket.on('error', (error: Error) => resolve({ authorized: false, error: error.message }));
      });

    it('verifies against the caBundle CA for the name the API server dials', async () => {
      assert.deepEqual(await handshake('conndrain-webhook.conndrain-system.svc', ca), { authorized: true });
    });

    it('is refused for another name, and by a client trusting another CA', async () => {
      const wrongName = await handshake('other.conndrain-system.svc', ca);
      assert.equal(wrongName.authorized, false);
      assert.match(wrongName.error ?? '', /does not match|altnames/i);
      const otherCa = (await generateServingPair({ dnsNames: ['x'], now: new Date(), validityDays: 1 })).caCert;
      const untrusted = await handshake('conndrain-webhook.conndrain-system.svc', otherCa);
      assert.equal(untrusted.authorized, false);
    });
  });
});
