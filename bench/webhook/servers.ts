/**
 * Child process of bench/webhook/run.ts: serves both sides of the comparison, one after the
 * other as asked on stdin, so the load generator (autocannon) never shares their event loop.
 *   bare:  node:https, answers a fixed AdmissionReview after reading the body (the floor)
 *   bareParse: the floor plus JSON.parse of the body, nothing else (a reference: no JSON
 *          webhook can answer faster than this, so it bounds the throughput ratio)
 *   ours:  the real webhook server (hygiene, injection, patch, metrics, logs at info)
 *   oursViaExpress: the same /mutate handler mounted as an Express route (express-mutate.ts)
 * Prints one JSON line {bare, bareParse, ours, oursViaExpress} with the ports.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { DEFAULT_INJECT_CONFIG } from '../../src/config/webhook.js';
import { batchedDestination, createLogger } from '../../log/logger.js';
import { startWebhookServer } from '../../webhook/server.js';
import { startExpressMutateServer } from './express-mutate.js';

const certDir = process.argv[2] ?? '';
const cert = readFileSync(`${certDir}/tls.crt`);
const key = readFileSync(`${certDir}/tls.key`);

const fixed = Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: true } }));
const bare = createServer({ cert, key, minVersion: 'TLSv1.2' }, (req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': fixed.length });
    res.end(fixed);
  });
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
let parsed: unknown;
const bareParse = createServer({ cert, key, minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': fixed.length });
    res.end(fixed);
  });
});
await new Promise<void>((resolve) => bareParse.listen(0, '127.0.0.1', resolve));

// The production logger (level info, lines batched like `conndrain webhook` does), into /dev/null.
const logger = createLogger({ level: 'info', component: 'webhook', destination: batchedDestination('/dev/null') });
const ours = await startWebhookServer({
  config: { ...DEFAULT_INJECT_CONFIG, address: '127.0.0.1', port: 0, certDir, certPollIntervalMs: 5000, shutdownDelayMs: 0, shutdownTimeoutMs: 1000, maxConnections: 1024, logLevel: 'info' },
  logger,
});
const oursViaExpress = await startExpressMutateServer({ cert, key, config: DEFAULT_INJECT_CONFIG, logger });
const portOf = (server: typeof bare): number => (server.address() as AddressInfo).port;
process.stdout.write(`${JSON.stringify({ bare: portOf(bare), bareParse: portOf(bareParse), ours: ours.port, oursViaExpress: portOf(oursViaExpress.server) })}\n`);
// Protocol on stdin, one command per line: "cpu" -> one JSON line with process.cpuUsage()
// (so the runner can charge CPU time per request, a figure a busy machine does not distort
// as much as wall time); end of input -> close both servers and exit.
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') process.stdout.write(`${JSON.stringify(process.cpuUsage())}\n`);
});
process.stdin.on('end', () => {
  bare.close();
  bareParse.close();
  if (parsed === undefined) process.stderr.write('bareParse never parsed a body\n');
  void Promise.all([ours.close(), oursViaExpress.close()]).then(() => process.exit(0));
});
