import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { fail, ok, type Result } from '../../src/result.js';

/** A certificate and key that belong together and were valid when loaded. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
  notBefore: Date;
  notAfter: Date;
  serialNumber: string;
  fingerprint256: string;
  subject: string;
}

export const MIN_TLS_VERSION = 'TLSv1.2';

/**
 * Checks a PEM pair the way a TLS handshake would need it: both parse, the key matches the
 * (first) certificate, the certificate is inside its validity window, and Node can build a
 * secure context from it. Never throws; the error says what is wrong.
 */
export function validatePair(cert: Buffer, key: Buffer, now: Date): Result<CertificatePair, string> {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    return fail(`tls.crt is not a PEM certificate: ${(error as Error).message}`);
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) return fail(`tls.key does not match the certificate (serial ${x509.serialNumber})`);
  } catch (error) {
    return fail(`tls.key is not a usable private key: ${(error as Error).message}`);
  }
  const notBefore = new Date(x509.validFrom);
  const notAfter = new Date(x509.validTo);
  if (now.getTime() >= notAfter.getTime()) return fail(`the certificate (serial ${x509.serialNumber}) expired at ${notAfter.toISOString()}`);
  if (now.getTime() < notBefore.getTime()) return fail(`the certificate (serial ${x509.serialNumber}) is not valid before ${notBefore.toISOString()}`);
  try {
    createSecureContext({ cert, key, minVersion: MIN_TLS_VERSION });
  } catch (error) {
    return fail(`the pair cannot serve TLS: ${(error as Error).message}`);
  }
  return ok({ cert, key, notBefore, notAfter, serialNumber: x509.serialNumber, fingerprint256: x509.fingerprint256, subject: x509.subject.replace(/\n/g, ', ') });
}
