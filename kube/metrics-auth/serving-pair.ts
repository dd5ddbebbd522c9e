/**
 * The certificate the agent's `/metrics` is served with: the configured files, or a
 * self-signed one made at start and kept in memory only (nothing to mount, nothing written on
 * the node), as controller-runtime does when no certificate is given. Scrapers then verify
 * nothing but the API-checked token (`insecureSkipVerify` in the ServiceMonitor) unless a
 * certificate signed by a CA they trust is configured.
 */
import { generateKeyPair, randomBytes, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ECDSA_WITH_SHA256, pem, signedCertificate, tbsCertificate } from '../../src/x509/certificate.js';

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

const DAY_MS = 86_400_000;
const generateEcKeyPair = promisify(generateKeyPair);

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

/**
 * A self-signed ECDSA P-256 serving certificate for `dnsNames` (the first one is the CN),
 * encoded by src/x509 and signed by node:crypto: no X.509 library stays loaded in the agent.
 */
export async function generateSelfSigned(dnsNames: readonly string[], now: Date, validityDays: number): Promise<{ cert: string; key: string }> {
  const names = dnsNames.length > 0 ? dnsNames : ['localhost'];
  const { publicKey, privateKey } = await generateEcKeyPair('ec', { namedCurve: 'P-256' });
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  const tbs = tbsCertificate({
    serial,
    commonName: names[0] ?? 'localhost',
    dnsNames: names,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
    publicKeyInfo: publicKey.export({ type: 'spki', format: 'der' }),
    signatureAlgorithm: ECDSA_WITH_SHA256,
  });
  // ECDSA signatures from node:crypto are DER (r, s) by default, as X.509 carries them.
  const signature = sign('sha256', tbs, privateKey);
  const cert = pem('CERTIFICATE', signedCertificate(tbs, ECDSA_WITH_SHA256, signature));
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
