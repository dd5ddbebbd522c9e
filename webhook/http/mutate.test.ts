import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../log/logger.js';
import type { AdmissionHandler } from '../admission/handler.js';
import { allowed } from '../admission/answer.js';
import { createWebhookMetrics } from '../metrics.js';
import { AdmissionSummary } from './admission-summary.js';
import { BodyBudget } from './body-budget.js';
import { DEFAULT_CONNECTION_LIMITS } from './limits.js';
import { createMutateHandler } from './mutate.js';

const review = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-9', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: {} } });

/** /mutate over plain HTTP around the given handler: the layer reads, asks the handler, writes. */
async function post(handler: AdmissionHandler): Promise<{ status: number; body: unknown; logs: Array<Record<string, unknown>>; errors: number }> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done): void {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'info', component: 'webhook', destination: sink });
  const metrics = createWebhookMetrics({ processMetrics: false });
  const summary = new AdmissionSummary(logger, 60_000);
  const limits = DEFAULT_CONNECTION_LIMITS;
  const mutate = createMutateHandler({ handler, logger, metrics, limits, budget: new BodyBudget(limits.bodyBudgetBytes), summary, closing: () => false });
  const server = createServer((req, res) => void mutate(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/mutate', headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(review);
    });
    const counted = (await metrics.admissions.get()).values.find((v) => v.labels['result'] === 'error')?.value ?? 0;
    return { status: reply.status, body: JSON.parse(reply.text), logs, errors: counted };
  } finally {
    summary.stop();
    server.close();
  }
}

test('POST /mutate answers with whatever the handler decided, uid filled in', async () => {
  const reply = await post({ handle: () => allowed('fine', ['a warning']) });
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u-9', allowed: true, warnings: ['a warning'] } });
  assert.equal(reply.errors, 0);
});

test('POST /mutate with a throwing handler: HTTP 200, an errored AdmissionReview, logged and counted as an error', async () => {
  const reply = await post({
    handle: () => {
      throw new Error('kaput');
    },
  });
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'u-9', allowed: false, status: { code: 500, reason: 'InternalError', message: 'conndrain: internal error: kaput' } },
  });
  assert.equal(reply.errors, 1);
  const line = reply.logs.find((l) => l['msg'] === 'admission failed');
  assert.ok(line, JSON.stringify(reply.logs));
  assert.equal(line['uid'], 'u-9');
  assert.equal(line['problem'], 'conndrain: internal error: kaput');
});
