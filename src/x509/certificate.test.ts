/**
 * The serving certificate's encoding, read back by node:crypto's parser (OpenSSL's): every
 * field and extension the agent's /metrics relies on. Signing and the TLS handshake are tested
 * where the key is made (kube/metrics-auth/serving-pair.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { ECDSA_WITH_SHA256, pem, signedCertificate, tbsCertificate, type ServingCertificateFields } from './certificate.js';

/** A P-256 public key (SubjectPublicKeyInfo DER); the signature below is not checked by parsing. */
const SPKI = Buffer.from('MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEmB0+Dn50VyuaJT7yMTBjX9Qsr2TDkm0zyuoGR/hZLnX+F7NtDkKrYSG3VA5wZEe32FhyBoHLfHdDLfE0ku2epA==', 'base64');
const FIELDS: ServingCertificateFields = {
  serial: Buffer.from('0123456789abcdef0123456789abcdef', 'hex'),
  commonName: 'node-a.example',
  dnsNames: ['node-a.example', 'localhost'],
  notBefore: new Date('2026-12-07T00:00:00Z'),
  notAfter: new Date('2051-01-01T00:00:00Z'),
  publicKeyInfo: SPKI,
  signatureAlgorithm: ECDSA_WITH_SHA256,
};
const parse = (fields: ServingCertificateFields): X509Certificate =>
  new X509Certificate(pem('CERTIFICATE', signedCertificate(tbsCertificate(fields), ECDSA_WITH_SHA256, Buffer.from('3006020101020101', 'hex'))));

test('a serving certificate parses with its subject, issuer, serial, validity, key and names', () => {
  const cert = parse(FIELDS);
  assert.equal(cert.subject, 'CN=node-a.example');
  assert.equal(cert.issuer, 'CN=node-a.example');
  assert.equal(cert.serialNumber.toLowerCase(), '0123456789abcdef0123456789abcdef');
  assert.equal(new Date(cert.validFrom).toISOString(), '2026-12-07T00:00:00.000Z');
  // After 2049 the time is a GeneralizedTime: read back the same.
  assert.equal(new Date(cert.validTo).toISOString(), '2051-01-01T00:00:00.000Z');
  assert.equal(cert.subjectAltName, 'DNS:node-a.example, DNS:localhost');
  assert.equal(cert.checkHost('localhost'), 'localhost');
  assert.equal(cert.checkHost('other.example'), undefined);
  assert.equal(cert.ca, false);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.deepEqual(cert.publicKey.export({ type: 'spki', format: 'der' }), SPKI);
  assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
});

test('the extensions as DER: CA false and digital signature only, both critical', () => {
  // node's parser does not expose criticality: read the encoding.
  const der = signedCertificate(tbsCertificate(FIELDS), ECDSA_WITH_SHA256, Buffer.from('3006020101020101', 'hex')).toString('hex');
  assert.ok(der.includes('300c0603551d130101ff04023000'), 'basicConstraints critical, cA absent (FALSE)');
  assert.ok(der.includes('300e0603551d0f0101ff040403020780'), 'keyUsage critical, digitalSignature only');
});

test('bad fields are refused with what is wrong, before anything is signed', () => {
  assert.throws(() => tbsCertificate({ ...FIELDS, serial: Buffer.from([0x80, 1]) }), /serial/);
  assert.throws(() => tbsCertificate({ ...FIELDS, serial: Buffer.alloc(0) }), /serial/);
  assert.throws(() => tbsCertificate({ ...FIELDS, serial: Buffer.alloc(3) }), /serial/);
  assert.throws(() => tbsCertificate({ ...FIELDS, serial: Buffer.alloc(21, 1) }), /serial/);
  assert.throws(() => tbsCertificate({ ...FIELDS, dnsNames: [] }), /DNS name/);
  assert.throws(() => tbsCertificate({ ...FIELDS, dnsNames: ['a b'] }), /not a DNS name/);
  assert.throws(() => tbsCertificate({ ...FIELDS, dnsNames: ['nœud'] }), /not a DNS name/);
  assert.throws(() => tbsCertificate({ ...FIELDS, notAfter: FIELDS.notBefore }), /notBefore/);
});

test('PEM lines are 64 characters between the BEGIN and END lines', () => {
  const lines = pem('CERTIFICATE', Buffer.alloc(100, 7)).trimEnd().split('\n');
  assert.equal(lines[0], '-----BEGIN CERTIFICATE-----');
  assert.equal(lines.at(-1), '-----END CERTIFICATE-----');
  // 100 bytes are 136 base64 characters.
  assert.deepEqual(lines.slice(1, -1).map((l) => l.length), [64, 64, 8]);
  assert.deepEqual(Buffer.from(lines.slice(1, -1).join(''), 'base64'), Buffer.alloc(100, 7));
});
