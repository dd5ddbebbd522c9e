/**
 * A self-signed X.509 v3 serving certificate, as the agent's `/metrics` uses when no
 * certificate is configured (RFC 5280): the part to be signed, and the certificate around a
 * signature of it. The key and the signature come from the caller (node:crypto): this file
 * only encodes, so the agent needs no X.509 library: one, with its dependencies, stayed loaded
 * on every node for a certificate made once at start (its RSS: docs/scale.md).
 */
import { bitString, boolean, explicit, objectIdentifier, octetString, sequence, set, smallInteger, time, tlv, unsignedInteger, utf8String } from './der.js';

/** ecdsa-with-SHA256 (RFC 5758): the signature algorithm, with no parameters. */
export const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

export interface ServingCertificateFields {
  /** Positive, at most 20 bytes (RFC 5280 4.1.2.2), big-endian. */
  serial: Uint8Array;
  /** Subject and issuer CN (self-signed: the same). */
  commonName: string;
  /** subjectAltName dNSName entries: ASCII (IA5String). */
  dnsNames: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** The subject's public key as SubjectPublicKeyInfo DER (node: `export({ type: 'spki', format: 'der' })`). */
  publicKeyInfo: Uint8Array;
  /** The signature algorithm's OID, written in the part signed and around the signature. */
  signatureAlgorithm: string;
}

const name = (commonName: string): Buffer => sequence(set(sequence(objectIdentifier(OID.commonName), utf8String(commonName))));

const extension = (oid: string, critical: boolean, value: Uint8Array): Buffer =>
  sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));

function dnsName(text: string): Buffer {
  if (text === '' || !/^[\x21-\x7e]+$/.test(text)) throw new RangeError(`certificate: ${JSON.stringify(text)} is not a DNS name (printable ASCII, no spaces)`);
  return tlv(0x82, Buffer.from(text, 'ascii'));
}

/** The TBSCertificate: what the issuer's key signs. */
export function tbsCertificate(fields: ServingCertificateFields): Buffer {
  if (fields.serial.length === 0 || fields.serial.length > 20 || fields.serial.every((b) => b === 0) || ((fields.serial[0] ?? 0) & 0x80) !== 0) {
    throw new RangeError('certificate: the serial must be 1-20 bytes, positive and not zero');
  }
  if (fields.dnsNames.length === 0) throw new RangeError('certificate: a serving certificate needs at least one DNS name');
  if (!(fields.notBefore.getTime() < fields.notAfter.getTime())) throw new RangeError('certificate: notBefore must come before notAfter');
  const algorithm = sequence(objectIdentifier(fields.signatureAlgorithm));
  const extensions = [
    // cA FALSE is the default, so the sequence is empty (DER leaves defaults out).
    extension(OID.basicConstraints, true, sequence()),
    // digitalSignature only: bit 0, seven unused bits in the one byte.
    extension(OID.keyUsage, true, tlv(0x03, Buffer.from([0x07, 0x80]))),
    extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
    extension(OID.subjectAltName, false, sequence(...fields.dnsNames.map(dnsName))),
  ];
  return sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(fields.serial),
    algorithm,
    name(fields.commonName),
    sequence(time(fields.notBefore), time(fields.notAfter)),
    name(fields.commonName),
    Buffer.from(fields.publicKeyInfo),
    explicit(3, sequence(...extensions)),
  );
}

/** The Certificate: the part signed, the algorithm again, and the signature (DER as the algorithm defines it). */
export function signedCertificate(tbs: Uint8Array, signatureAlgorithm: string, signature: Uint8Array): Buffer {
  return sequence(tbs, sequence(objectIdentifier(signatureAlgorithm)), bitString(signature));
}

/** PEM: base64 in lines of 64 between the label's BEGIN and END lines. */
export function pem(label: string, der: Uint8Array): string {
  const body = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}
