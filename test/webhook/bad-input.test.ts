/**
 * Bad-input table over real HTTPS: every malformed request gets the exact status and message,
 * the uid is echoed whenever there is one, and the server keeps serving afterwards.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { review, samplePod, send, startTestWebhook, type TestWebhook } from './harness.js';

let web: TestWebhook;
before(async () => {
  web = await startTestWebhook();
});
after(async () => {
  await web.stop();
});

const EXPECTED = 'an admission.k8s.io/v1 AdmissionReview';
const SEVEN_MIB = 7 * 1024 * 1024;

interface Case {
  name: string;
  method?: string;
  path?: string;
  body?: string | Buffer;
  headers?: Record<string, string | number>;
  status: number;
  reason: string;
  message: string;
}

const CASES: Case[] = [
  { name: 'GET instead of POST', method: 'GET', status: 405, reason: 'method-not-allowed', message: `method GET is not allowed on /mutate; expected POST with ${EXPECTED}` },
  { name: 'PUT instead of POST', method: 'PUT', body: review(samplePod()), status: 405, reason: 'method-not-allowed', message: `method PUT is not allowed on /mutate; expected POST with ${EXPECTED}` },
  { name: 'text/plain body', body: review(samplePod()), headers: { 'Content-Type': 'text/plain' }, status: 415, reason: 'unsupported-media-type', message: 'content type "text/plain" is not supported; expected application/json' },
  { name: 'YAML content type', body: 'a: b', headers: { 'Content-Type': 'application/yaml' }, status: 415, reason: 'unsupported-media-type', message: 'content type "application/yaml" is not supported; expected application/json' },
  { name: 'no content type', body: review(samplePod()), headers: { 'Content-Type': '' }, status: 415, reason: 'unsupported-media-type', message: 'no content type is not supported; expected application/json' },
  { name: 'body above 7 MiB', body: Buffer.alloc(SEVEN_MIB + 1, 0x20), status: 413, reason: 'body-too-large', message: 'request body is larger than 7340032 bytes (7 MiB), more than any AdmissionReview the API server sends' },
  { name: 'empty body', body: '', status: 400, reason: 'empty-body', message: `request body is empty; expected ${EXPECTED}` },
  { name: 'malformed JSON', body: '{"apiVersion": "admission.k8s.io/v1", "kind": ', status: 400, reason: 'malformed-json', message: `request body is not valid JSON; expected ${EXPECTED}` },
  { name: 'JSON array', body: '[]', status: 400, reason: 'not-admission-review', message: `request body is an array, not ${EXPECTED}` },
  { name: 'JSON string', body: '"hello"', status: 400, reason: 'not-admission-review', message: `request body is a string, not ${EXPECTED}` },
  { name: 'JSON null', body: 'null', status: 400, reason: 'not-admission-review', message: `request body is null, not ${EXPECTED}` },
  {
    name: 'v1beta1 AdmissionReview', body: review(samplePod()).replace('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'), status: 400, reason: 'wrong-api-version',
    message: 'expected apiVersion "admission.k8s.io/v1" and kind "AdmissionReview", got apiVersion "admission.k8s.io/v1beta1" and kind "AdmissionReview"; register the webhook with admissionReviewVersions: ["v1"]',
  },
  {
    name: 'a Pod instead of a review', body: JSON.stringify(samplePod()), status: 400, reason: 'wrong-api-version',
    message: 'expected apiVersion "admission.k8s.io/v1" and kind "AdmissionReview", got apiVersion "v1" and kind "Pod"; register the webhook with admissionReviewVersions: ["v1"]',
  },
  { name: 'no request', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), status: 400, reason: 'missing-request', message: 'the AdmissionReview has no request object' },
  { name: 'no request.uid', body: review(samplePod(), { uid: undefined }), status: 400, reason: 'missing-uid', message: 'request.uid is missing or empty; the API server always sets it and expects it back in response.uid' },
  { name: 'empty request.uid', body: review(samplePod(), { uid: '' }), status: 400, reason: 'missing-uid', message: 'request.uid is missing or empty; the API server always sets it and expects it back in response.uid' },
  { name: 'request.kind a string', body: review(samplePod(), { kind: 'Pod' }), status: 400, reason: 'malformed-request', message: `request.kind is a string, expected an object with group, version, kind (in ${EXPECTED})` },
  { name: 'numeric request.uid', body: review(samplePod(), { uid: 42 }), status: 400, reason: 'missing-uid', message: 'request.uid is missing or empty; the API server always sets it and expects it back in response.uid' },
  { name: 'unknown path', path: '/validate', body: review(samplePod()), status: 404, reason: 'not-found', message: 'no route POST /validate; the webhook serves POST /mutate, GET /healthz, /readyz and /metrics' },
  // One route for /mutate, matched exactly as the webhook configuration names it.
  { name: 'a trailing slash on /mutate', path: '/mutate/', body: review(samplePod()), status: 404, reason: 'not-found', message: 'no route POST /mutate/; the webhook serves POST /mutate, GET /healthz, /readyz and /metrics' },
];

for (const c of CASES) {
  test(`bad input: ${c.name} -> ${c.status}`, async () => {
    const reply = await send(web, { method: c.method, path: c.path, body: c.body, headers: c.headers });
    assert.equal(reply.status, c.status, reply.text);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    assert.deepEqual(reply.json, { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: c.status, reason: c.reason, message: c.message });
    if (c.status === 405) assert.equal(reply.headers['allow'], 'POST');
  });
}

test('bad input: a chunked body above 7 MiB without Content-Length -> 413', async () => {
  const reply = await send(web, { body: Buffer.alloc(SEVEN_MIB + 64 * 1024, 0x20), headers: { 'Transfer-Encoding': 'chunked' } });
  assert.equal(reply.status, 413);
  assert.equal((reply.json as { reason: string }).reason, 'body-too-large');
  assert.equal(reply.headers['connection'], 'close');
});

test('bad input: a Pod CREATE without request.object is answered with the uid echoed', async () => {
  const reply = await send(web, { body: review(undefined) });
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.json, {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    response: { uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: false, status: { code: 400, reason: 'BadRequest', message: 'conndrain: request.object is missing from a Pod CREATE review' } },
  });
});

test('bad input: an error thrown inside admission is caught and answered with the uid echoed', async () => {
  const broken = await startTestWebhook({ random: () => { throw new Error('entropy source failed'); } });
  try {
    const reply = await send(broken, { body: review(samplePod()) });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.json, {
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      response: { uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: false, status: { code: 500, reason: 'InternalError', message: 'conndrain: injection failed: entropy source failed; the pod was left unchanged' } },
    });
    // The server is still up and answers the next request.
    assert.equal((await send(broken, { method: 'GET', path: '/healthz' })).status, 200);
    assert.ok(broken.logs.some((l) => l['msg'] === 'admission failed' && l['uid'] === 'e911857d-c318-11e8-bbad-025000000001'));
  } finally {
    await broken.stop();
  }
});

test('bad input: every rejection is counted by reason and the server still admits afterwards', async () => {
  const metrics = await send(web, { method: 'GET', path: '/metrics' });
  assert.match(metrics.text, /conndrain_webhook_admissions_total\{result="rejected",reason="malformed-json"\} 1/);
  assert.match(metrics.text, /conndrain_webhook_admissions_total\{result="rejected",reason="missing-uid"\} 3/);
  const ok = await send(web, { body: review(samplePod()) });
  assert.equal(ok.status, 200);
  assert.equal((ok.json as { response: { allowed: boolean } }).response.allowed, true);
});
