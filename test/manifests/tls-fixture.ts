/** A throwaway CA and serving pair made with the openssl CLI, for the image smoke test. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TlsFixture {
  ca: string;
}

/** Writes tls.crt/tls.key for `dnsNames` into `certDir`, signed by a new CA it returns. */
export function writeServingPair(workDir: string, certDir: string, dnsNames: readonly string[]): TlsFixture {
  const at = (name: string): string => join(workDir, name);
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.crt'), '-days', '1', '-subj', '/CN=conndrain-test-ca');
  ssl('req', ...ec, '-keyout', join(certDir, 'tls.key'), '-out', at('tls.csr'), '-subj', `/CN=${dnsNames[0] ?? 'localhost'}`);
  writeFileSync(at('san.ext'), `subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  ssl('x509', '-req', '-in', at('tls.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', join(certDir, 'tls.crt'), '-days', '1', '-extfile', at('san.ext'));
  return { ca: readFileSync(at('ca.crt'), 'utf8') };
}
