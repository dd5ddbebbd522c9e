/**
 * The certificate the agent's `/metrics` is served with: the configured files, or a
 * self-signed one made at start and kept in memory only (nothing to mount, nothing written on
 * the node), as controller-runtime does when no certificate is given. Scrapers then verify
 * nothing but the API-checked token (`insecureSkipVerify` in the ServiceMonitor) unless a
 * certificate signed by a CA they trust is configured.
 */
// tsyringe (a dependency of @peculiar/x509) needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as x509 from '@peculiar/x509';

export interface ServingPair {
  cert: string;
  key: string;
  /** Where it came from, for the start-up log. */
  source: 'files' | 'self-signed';
}

export interface ServingPairSource {
  /** PEM files; both or neither. */
  certFile?: string | undefined;
  keyFile?: string | undefined;
  /** Subject alternative names of a generated certificate (the node name, localhost...). */
  dnsNames: readonly string[];
  validityDays?: number;
  now?: Date;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export async function loadServingPair(source: ServingPairSource): Promise<ServingPair> {
  const hasCert = source.certFile !== undefined && source.certFile !== '';
  const hasKey = source.keyFile !== undefined && source.keyFile !== '';
  if (hasCert !== hasKey) throw new Error('a metrics certificate needs both the certificate and the key file');
  if (hasCert && hasKey) {
    const [cert, key] = await Promise.all([readFile(source.certFile ?? '', 'utf8'), readFile(source.keyFile ?? '', 'utf8')]);
    return { cert, key, source: 'files' };
  }
  return { ...(await generateSelfSigned(source.dnsNames, source.now ?? new Date(), source.validityDays ?? 365)), source: 'self-signed' };
}

/** A self-signed ECDSA P-256 serving certificate for `dnsNames` (the first one is the CN). */
export async function generateSelfSigned(dnsNames: readonly string[], now: Date, validityDays: number): Promise<{ cert: string; key: string }> {
  const names = dnsNames.length > 0 ? dnsNames : ['localhost'];
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: `CN=${names[0] ?? 'localhost'}`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
    ],
  });
  const key = KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString();
  return { cert: cert.toString('pem'), key };
}
