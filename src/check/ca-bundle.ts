/**
 * Does a webhook's caBundle verify the serving certificate the webhook presents? The API
 * server trusts exactly the caBundle when it calls the webhook: the leaf (tls.crt of the
 * Secret the webhook serves from) must chain to a certificate of the bundle, through the
 * intermediates the Secret carries, be valid now, and name the Service's DNS name.
 */
import { X509Certificate } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM text; unreadable blocks are skipped. */
export function certificatesOf(pem: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      // not a certificate: the caller reports what is missing
    }
  }
  return out;
}

function issued(issuer: X509Certificate, subject: X509Certificate): boolean {
  return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
}

/** A problem with the pair, or undefined when the bundle verifies the serving certificate for `dnsName` at `now`. */
export function caBundleProblem(caBundlePem: string, servingPem: string, dnsName: string, now: Date): string | undefined {
  const bundle = certificatesOf(caBundlePem);
  if (bundle.length === 0) return 'the caBundle holds no certificate';
  const [leaf, ...intermediates] = certificatesOf(servingPem);
  if (leaf === undefined) return 'the serving Secret holds no certificate in tls.crt';
  const nowMs = now.getTime();
  if (Date.parse(leaf.validTo) <= nowMs) return `the serving certificate expired at ${new Date(leaf.validTo).toISOString()}`;
  if (Date.parse(leaf.validFrom) > nowMs) return `the serving certificate is not valid before ${new Date(leaf.validFrom).toISOString()}`;
  if (leaf.checkHost(dnsName) === undefined) return `the serving certificate does not name ${dnsName} (${leaf.subjectAltName ?? 'no subject alternative name'})`;
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    const anchor = bundle.find((ca) => issued(ca, current));
    if (anchor !== undefined) {
      if (Date.parse(anchor.validTo) <= nowMs) return `the caBundle certificate ${anchor.subject.replace(/\n/g, ', ')} expired`;
      return undefined;
    }
    const next = intermediates.find((c) => c !== current && issued(c, current));
    if (next === undefined) break;
    current = next;
  }
  return `the caBundle does not verify the serving certificate (issuer ${leaf.issuer.replace(/\n/g, ', ')})`;
}
