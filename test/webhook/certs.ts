/**
 * Real certificates for tests, made with the openssl CLI (node:crypto cannot sign X.509):
 * a CA, and serving pairs for localhost/127.0.0.1 signed by it, written the way kubelet
 * updates a Secret volume (new files renamed into place, so a reader never sees half a file).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';

export interface TestCa {
  dir: string;
  caCert: string;
  caKeyPath: string;
  caCertPath: string;
  cleanup(): void;
}

export interface ServingPair {
  cert: string;
  key: string;
  serial: string;
  fingerprint256: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'cdwh-ca-'));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=conndrain-test-ca'], dir);
  return {
    dir,
    caCert: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    caKeyPath: join(dir, 'ca.key'),
    caCertPath: join(dir, 'ca.crt'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

let counter = 0;

/** A serving certificate for localhost and 127.0.0.1 with a distinct serial, signed by the CA. */
export function issueServingPair(ca: TestCa, days = 1): ServingPair {
  counter++;
  const name = `srv-${process.pid}-${counter}`;
  writeFileSync(join(ca.dir, `${name}.ext`), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n');
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=conndrain-webhook'], ca.dir);
  const serial = `0x${(0x1000 + counter).toString(16)}${process.pid.toString(16)}`;
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', serial, '-days', String(days), '-out', `${name}.crt`, '-extfile', `${name}.ext`], ca.dir);
  const cert = readFileSync(join(ca.dir, `${name}.crt`), 'utf8');
  const x509 = new X509Certificate(cert);
  return { cert, key: readFileSync(join(ca.dir, `${name}.key`), 'utf8'), serial: x509.serialNumber, fingerprint256: x509.fingerprint256 };
}

/**
 * Writes tls.crt/tls.key the way kubelet updates a Secret volume (its AtomicWriter): the files
 * go into a fresh `..<timestamp>` directory, the `..data` symlink is swapped to it with one
 * rename, and `tls.crt`/`tls.key` are symlinks through `..data`. A reader never sees a mix.
 */
let generation = 0;
export function installPair(dir: string, pair: { cert: string; key: string }): void {
  generation++;
  const versioned = `..${Date.now()}_${process.pid}_${generation}`;
  mkdirSync(join(dir, versioned));
  writeFileSync(join(dir, versioned, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, versioned, 'tls.key'), pair.key);
  const tmpLink = join(dir, '..data_tmp');
  rmSync(tmpLink, { force: true });
  symlinkSync(versioned, tmpLink);
  renameSync(tmpLink, join(dir, '..data'));
  for (const file of ['tls.crt', 'tls.key']) {
    if (!existsSync(join(dir, file))) symlinkSync(join('..data', file), join(dir, file));
  }
}
