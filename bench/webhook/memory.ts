/**
 * Webhook memory under the reliability load: `npx tsx bench/webhook/memory.ts`
 *
 * Runs `conndrain webhook` (the real CLI, production flags and limits, log level info) as a
 * child process and reads its RSS from /proc/<pid>/status (VmRSS now, VmHWM the peak) while:
 *   1. idle:       startup and 200 admissions (baseline)
 *   2. connections: --max-connections idle TLS connections held open (cost per connection)
 *   3. admissions: 64 keep-alive clients sending reviews back to back for BENCH_SECONDS,
 *                  half of them pods with a 256 KiB annotation (denied, message bounded)
 *   4. stalled:    the admissions load plus 40 connections announcing a 7 MiB body and
 *                  stopping after 6.5 MiB (the body budget refuses most; the rest are reaped
 *                  by the body timeouts), plus 40 TCP connections that never start TLS
 * Prints one JSON line per phase and a summary against the 256 Mi container limit.
 * Options: BENCH_SECONDS (default 8). Runs through tsx: its transpiler adds some MiB to the
 * baseline, so the figures are an upper bound for the compiled image.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestCa, installPair, issueServingPair } from '../../test/webhook/certs.js';
import { freePort } from '../../test/free-port.js';
import { realisticReview } from './review.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
const LIMIT_MIB = 256;
const MAX_CONNECTIONS = 256;
const ROOT = new URL('../../', import.meta.url).pathname;
const MiB = 1024 * 1024;

function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 102.4) / 10, peakMiB: Math.round(kib('VmHWM') / 102.4) / 10 };
}

const ca = createTestCa();
const certDir = mkdtempSync(join(tmpdir(), 'cdwh-mem-'));
installPair(certDir, issueServingPair(ca));
const port = await freePort();
const V8_FLAGS = (process.env['BENCH_V8_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
// BENCH_DIST=<dir of `tsc -p tsconfig.build.json --outDir <dir>`>: the compiled CLI, as the image runs it.
const DIST = process.env['BENCH_DIST'];
const entry = DIST === undefined ? ['--import', 'tsx', 'cli/main.ts'] : [join(DIST, 'cli/main.js')];
const child = spawn(process.execPath, [...V8_FLAGS, ...entry, 'webhook', '--cert-dir', certDir, '--port', String(port), '--address', '127.0.0.1', '--log-level', process.env['BENCH_LOG_LEVEL'] ?? 'info', `--max-connections=${MAX_CONNECTIONS}`, '--shutdown-delay=0s'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
let logBytes = 0;
let logLines = 0;
let ready = false;
let handshakeFailures = 0;
child.stdout.on('data', (c: Buffer) => {
  logBytes += c.length;
  handshakeFailures += c.toString().split('TLS handshake failed').length - 1;
  logLines += c.toString().split('\n').length - 1;
  if (c.toString().includes('webhook listening')) ready = true;
});
const pid = child.pid ?? 0;
while (!ready) await sleep(50);

const normal = JSON.stringify(realisticReview('u-normal'));
const bigAnnotation = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: { uid: 'u-big', kind: { group: '', version: 'v1', kind: 'Pod' }, namespace: 'shop', operation: 'CREATE', object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'big-', annotations: { 'conndrain.io/drain': 'x'.repeat(256 * 1024) } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } } },
});

function post(agent: Agent, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest({ host: '127.0.0.1', port, servername: 'localhost', ca: ca.caCert, agent, method: 'POST', path: '/mutate', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function tls(): Promise<TLSSocket | undefined> {
  return new Promise((resolve) => {
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ca: ca.caCert }, () => resolve(socket));
    socket.on('error', () => resolve(undefined));
  });
}

const phases: Array<Record<string, unknown>> = [];
function report(phase: string, extra: Record<string, unknown> = {}): void {
  const line = { phase, ...memoryOf(pid), ...extra };
  phases.push(line);
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

// 1. baseline
const warm = new Agent({ keepAlive: true, maxSockets: 4 });
for (let i = 0; i < 200; i++) await post(warm, normal);
warm.destroy();
await sleep(500);
report('idle');
const baseline = memoryOf(pid).rssMiB;

// 2. idle connections up to the cap
const held: TLSSocket[] = [];
for (let i = 0; i < MAX_CONNECTIONS - 8; i++) {
  const s = await tls();
  if (s !== undefined) held.push(s);
}
await sleep(500);
const withConnections = memoryOf(pid).rssMiB;
report('connections', { open: held.length, perConnectionKiB: Math.round(((withConnections - baseline) * 1024) / held.length) });
for (const s of held) s.destroy();
await sleep(500);

// 3. admissions load
let stop = false;
const counts = { ok: 0, other: 0 };
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const workers = Array.from({ length: 64 }, async (_, i) => {
  while (!stop) {
    const status = await post(agent, i % 2 === 0 ? normal : bigAnnotation);
    if (status === 200) counts.ok++;
    else counts.other++;
  }
});
await sleep(SECONDS * 1000);
report('admissions', { clients: 64, answered: counts.ok, other: counts.other });

// 4. stalled bodies and half-open connections on top of the load
const stalled: Socket[] = [];
const halfOpen: Socket[] = [];
const statuses = new Map<string, number>();
for (let i = 0; i < 40; i++) {
  const s = await tls();
  if (s === undefined) continue;
  stalled.push(s);
  s.on('data', (c: Buffer) => {
    const status = /^HTTP\/1\.1 (\d+)/.exec(c.toString())?.[1] ?? 'data';
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  s.write(`POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${7 * MiB}\r\n\r\n`);
  s.write(Buffer.alloc(6.5 * MiB, 0x20));
}
for (let i = 0; i < 40; i++) {
  const s = connectTcp({ host: '127.0.0.1', port });
  s.on('error', () => undefined);
  // Reading, or the client would never see the server's FIN.
  s.resume();
  halfOpen.push(s);
}
const isOpen = (s: Socket): boolean => !s.destroyed && s.readyState !== 'closed';
const stalledStart = Date.now();
await sleep(2000);
report('stalled (holding)', { stalledBodies: 40, halfOpen: 40 });
while ([...stalled, ...halfOpen].some(isOpen) && Date.now() - stalledStart < 40_000) await sleep(200);
report('stalled (reaped)', { handshakeFailures, stalledOpen: stalled.filter(isOpen).length, halfOpenOpen: halfOpen.filter(isOpen).length, reapedWithinMs: Date.now() - stalledStart, answers: Object.fromEntries(statuses) });
stop = true;
await Promise.all(workers);
agent.destroy();
for (const s of [...stalled, ...halfOpen]) s.destroy();

const peak = memoryOf(pid).peakMiB;
process.stdout.write(`${JSON.stringify({ summary: true, build: DIST === undefined ? 'tsx' : 'compiled', v8Flags: V8_FLAGS, baselineMiB: baseline, peakMiB: peak, limitMiB: LIMIT_MIB, peakShareOfLimit: Math.round((peak / LIMIT_MIB) * 100) / 100, admissions: counts.ok, logLines, logBytes })}\n`);
child.kill('SIGTERM');
await new Promise((resolve) => child.on('close', resolve));
rmSync(certDir, { recursive: true, force: true });
ca.cleanup();
