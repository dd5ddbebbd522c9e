/**
 * Per-stage CPU cost of answering one /mutate request, without HTTP or TLS:
 * `npx tsx bench/webhook/micro.ts`
 *
 * The body is the benchmark's realistic 6.4 KB AdmissionReview (bench/webhook/review.ts).
 * Each stage runs in batches of ~2 ms; the figure is the fastest batch's mean, so a busy
 * machine (another process taking the CPU mid-batch) inflates it much less than a plain mean.
 */
import { Writable } from 'node:stream';
import { DEFAULT_INJECT_CONFIG } from '../../src/config/webhook.js';
import { injectPod } from '../../src/inject/index.js';
import { createLogger } from '../../log/logger.js';
import { DrainHookInjection } from '../../webhook/admission/drain-hook.js';
import { diffPatch, encodePatch } from '../../webhook/admission/patch.js';
import { admitReview } from '../../webhook/http/admit.js';
import { encodeReview } from '../../webhook/http/review.js';
import { createWebhookMetrics } from '../../webhook/metrics.js';
import { pooledRandom } from '../../webhook/random.js';
import { realisticReview } from './review.js';

const BATCHES = Number(process.env.MICRO_BATCHES ?? 200);
const body = JSON.stringify(realisticReview('e911857d-c318-11e8-bbad-025000000001'));
const bytes = Buffer.from(body);
const random = pooledRandom();
const handler = new DrainHookInjection({ config: DEFAULT_INJECT_CONFIG, random });
const review = JSON.parse(body) as { request: { object: unknown } };
const pod = review.request.object;
const injected = injectPod(pod, DEFAULT_INJECT_CONFIG, random);
const operations = diffPatch(pod, injected.pod);
/** What /mutate does with a body before it writes: decode, check, ask the handler, encode the answer. */
const answerReview = (): unknown => {
  const admitted = admitReview(body, handler);
  return admitted.ok ? encodeReview(admitted.value.answer) : admitted.error;
};
const answer = answerReview();
let sink: unknown;

/** Microseconds per call: the fastest of BATCHES batches of about 2 ms each. */
function cost(fn: () => unknown): number {
  let perBatch = 1;
  for (let spent = 0; spent < 2e6; perBatch *= 2) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) sink = fn();
    spent = Number(process.hrtime.bigint() - t0);
  }
  let best = Infinity;
  for (let b = 0; b < BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) sink = fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / perBatch / 1e3);
  }
  return best;
}

// A sink that accepts pino's writes and drops them (the bench's servers log to /dev/null).
const devNull = new Writable({ write: (_chunk, _encoding, done) => done() });
const logger = createLogger({ level: 'info', component: 'webhook', destination: devNull });
const metrics = createWebhookMetrics();
const stages: [string, () => unknown][] = [
  ['body: Buffer -> string', () => bytes.toString('utf8')],
  ['JSON.parse of the review', (): unknown => JSON.parse(body)],
  ['injectPod', () => injectPod(pod, DEFAULT_INJECT_CONFIG, random)],
  ['diffPatch (fast-json-patch compare)', () => diffPatch(pod, injected.pod)],
  ['encodePatch (JSON + base64)', () => encodePatch(operations)],
  ['admitReview + encodeReview (all of the above)', answerReview],
  ['response JSON.stringify + byte length', () => Buffer.byteLength(JSON.stringify(answer))],
  ['metrics: counter + histogram', () => {
    metrics.admissions.inc({ result: 'allowed', reason: 'injected' });
    metrics.admissionDuration.observe({ result: 'allowed' }, 0.0003);
  }],
  ['log line: child(request) + info', () => logger.child({ uid: 'e911857d-c318-11e8-bbad-025000000001', namespace: 'shop', name: 'checkout-7d9f8b6c5d-*', operation: 'CREATE', kind: 'Pod' })
    .info({ result: 'allowed', reason: 'injected', status: 200, patchOperations: 6, durationMs: 0.3, warnings: [] }, 'drain hook injected')],
];
console.log(`request body ${body.length} bytes; patch ${operations.length} operations, ${JSON.stringify(operations).length} bytes`);
for (const [name, fn] of stages) console.log(`${name.padEnd(40)} ${cost(fn).toFixed(2).padStart(7)} us`);
if (sink === undefined) console.log('');
