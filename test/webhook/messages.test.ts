/**
 * Hostile annotation values through the real admission over HTTPS: every warning and every
 * deny message that comes back passes the check the API server applies to warnings
 * (NewWarningHeader: no control characters, C1 included, valid UTF-8), stays within the size
 * the API server passes on without cutting, and every echoed value is cut with its length said.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runeCount, WARNING_MAX, WARNINGS_TOTAL_MAX, MESSAGE_MAX, warningTextProblem } from '../../webhook/admission/printable.js';
import { review, samplePod, send, startTestWebhook, type TestWebhook } from './harness.js';

interface ReviewReply { response: { allowed: boolean; warnings?: string[]; status?: { message: string } } }

const MEGABYTE = 'v'.repeat(1024 * 1024);
const CONTROL = 'a\u0000b\nc\u001b[31md\u007fe\u0085f\u009fg';
const LONE = 'x\ud800y';

/** Annotation sets that make the webhook warn or deny, each with something hostile in it. */
const HOSTILE: Array<Record<string, string>> = [
  { 'conndrain.io/drain': MEGABYTE },
  { 'conndrain.io/drain': CONTROL },
  { 'conndrain.io/drain': LONE },
  { 'conndrain.io/drain': '30s', 'conndrain.io/hook': `${CONTROL}${MEGABYTE}` },
  { 'conndrain.io/drain': '30s', 'conndrain.io/containers': Array.from({ length: 5000 }, (_, i) => `Bad_${i}\u0085`).join(',') },
  { 'conndrain.io/drain': '30s', 'conndrain.io/containers': 'nope' },
  { 'conndrain.io/drain': '30s', 'conndrain.io/shutdown-grace': `-${MEGABYTE}` },
  { 'conndrain.io/drain': '30s', 'conndrain.io/drain-id': `${CONTROL}${MEGABYTE}` },
  { 'conndrain.io/drain': 'true', 'conndrain.io/hook': 'sleep', 'conndrain.io/containers': `app,${'q'.repeat(70)}`, 'conndrain.io/shutdown-grace': CONTROL },
];

function podWith(annotations: Record<string, string>, containerName = 'app'): Record<string, unknown> {
  const pod = samplePod(annotations);
  (pod['spec'] as { containers: Array<{ name: string }> }).containers[0] = { name: containerName, image: 'app:1' } as { name: string };
  return pod;
}

function deploymentWith(annotations: Record<string, string>): { object: unknown; extra: Record<string, unknown> } {
  return {
    object: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `web${CONTROL}`, namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' }, annotations }, spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
    },
    extra: { kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, resource: { group: 'apps', version: 'v1', resource: 'deployments' }, name: `web${CONTROL}` },
  };
}

function checkText(text: string, max: number, what: string): void {
  assert.equal(warningTextProblem(text), undefined, `${what}: ${JSON.stringify(text.slice(0, 300))}`);
  assert.ok(runeCount(text) <= max, `${what} has ${runeCount(text)} runes`);
  assert.ok(!text.includes(MEGABYTE.slice(0, 1000)), `${what} echoes a whole value`);
}

function checkReply(reply: ReviewReply, what: string): number {
  const warnings = reply.response.warnings ?? [];
  for (const w of warnings) checkText(w, WARNING_MAX, `${what} warning`);
  assert.ok(warnings.reduce((n, w) => n + runeCount(w), 0) <= WARNINGS_TOTAL_MAX, `${what}: warnings in total`);
  if (reply.response.status !== undefined) checkText(reply.response.status.message, MESSAGE_MAX, `${what} message`);
  return warnings.length + (reply.response.status === undefined ? 0 : 1);
}

let deny: TestWebhook;
let allow: TestWebhook;
before(async () => {
  deny = await startTestWebhook({ config: { logLevel: 'info' } });
  allow = await startTestWebhook({ config: { onInvalid: 'allow', onExistingPreStop: 'replace', logLevel: 'info' } });
});
after(async () => {
  await deny.stop();
  await allow.stop();
});

test('every deny, warning and log line for hostile values passes the API server check and stays small', async () => {
  let texts = 0;
  for (const [i, annotations] of HOSTILE.entries()) {
    for (const web of [deny, allow]) {
      for (const name of ['app', `app${CONTROL}${'n'.repeat(500)}`]) {
        const reply = await send(web, { body: review(podWith(annotations, name)) });
        assert.equal(reply.status, 200);
        assert.ok(reply.text.length < 16 * 1024, `case ${i}: answer of ${reply.text.length} bytes`);
        texts += checkReply(reply.json as ReviewReply, `pod case ${i}`);
      }
      const { object, extra } = deploymentWith(annotations);
      const reply = await send(web, { body: review(object, extra) });
      assert.ok(reply.text.length < 16 * 1024, `deployment case ${i}: answer of ${reply.text.length} bytes`);
      texts += checkReply(reply.json as ReviewReply, `deployment case ${i}`);
    }
  }
  assert.ok(texts >= HOSTILE.length * 2, `${texts} texts checked`);
  for (const web of [deny, allow]) {
    for (const line of web.logs) assert.ok(JSON.stringify(line).length < 16 * 1024, `log line of ${JSON.stringify(line).length} bytes: ${JSON.stringify(line).slice(0, 200)}`);
  }
});

test('an echoed megabyte value is cut and its length said', async () => {
  const reply = (await send(deny, { body: review(podWith({ 'conndrain.io/drain': MEGABYTE })) })).json as ReviewReply;
  assert.equal(reply.response.allowed, false);
  assert.match(reply.response.status?.message ?? '', /annotation conndrain\.io\/drain="v{64}…" \(1048576 characters\): "v{64}…" \(1048576 characters\) is not a duration/);
});

test('a C1 control character in a value reaches the user escaped, in a warning the API server keeps', async () => {
  const { object, extra } = deploymentWith({ 'conndrain.io/drain': 'x\u0085y' });
  const reply = (await send(deny, { body: review(object, extra) })).json as ReviewReply;
  assert.equal(reply.response.allowed, true);
  const warning = reply.response.warnings?.[0] ?? '';
  assert.match(warning, /"x\\u0085y" is not a duration/);
  assert.equal(warningTextProblem(warning), undefined);
});

test('Status refusals echo bounded values too (content type, apiVersion)', async () => {
  const type = await send(deny, { body: '{}', headers: { 'Content-Type': `text/${'p'.repeat(5000)}` } });
  assert.equal(type.status, 415);
  assert.ok(type.text.length < 1024, type.text);
  const version = await send(deny, { body: JSON.stringify({ apiVersion: MEGABYTE, kind: 'AdmissionReview' }) });
  assert.equal(version.status, 400);
  assert.match((version.json as { message: string }).message, /got apiVersion "v{64}…" \(1048576 characters\) and kind "AdmissionReview"/);
});
