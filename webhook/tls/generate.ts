/**
 * A private CA and a serving certificate signed by it, made in-process (node's WebCrypto keys,
 * X.509 encoding by @peculiar/x509: node:crypto can parse certificates but not build them).
 * ECDSA P-256 like the cert-manager Certificates of the default install.
 */
// tsyringe (a dependency of @peculiar/x509) needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export interface GeneratedPair {
  /** PEM of the CA certificate: what the MutatingWebhookConfiguration's caBundle carries. */
  caCert: string;
  /** PEM of the serving certificate (SANs = dnsNames). */
  cert: string;
  /** PEM (PKCS#8) of the serving key. The CA key is discarded: nothing is signed later. */
  key: string;
}

export interface GenerateOptions {
  dnsNames: readonly string[];
  now: Date;
  validityDays: number;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** A positive 128-bit serial number in hex (RFC 5280: at most 20 octets, non-negative). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f | 0x01;
  return bytes.toString('hex');
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']));
}

/** Generates a new CA and a serving pair for `dnsNames`, both valid from one minute ago for `validityDays`. */
export async function generateServingPair(options: GenerateOptions): Promise<GeneratedPair> {
  if (options.dnsNames.length === 0) throw new Error('generateServingPair: at least one DNS name is needed');
  const notBefore = new Date(options.now.getTime() - 60_000);
  const notAfter = new Date(options.now.getTime() + options.validityDays * DAY_MS);
  const caKeys = await generateKeys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=conndrain-webhook-ca',
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const servingKeys = await generateKeys();
  const serving = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${options.dnsNames[0] ?? ''}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: servingKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(options.dnsNames.map((value) => ({ type: 'dns' as const, value }))),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const key = KeyObject.from(servingKeys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caCert: ca.toString('pem'), cert: serving.toString('pem'), key };
}
