/**
 * `conndrain inject`, `review` and `webhook` as a user runs them (child processes through the
 * real CLI entry point), plus the manifest rewriter on its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_INJECT_CONFIG } from '../../src/config/webhook.js';
import { seededRandom } from '../../src/inject/index.js';
import { injectManifests, ManifestError } from '../../cli/manifest/inject-manifests.js';
import { createTestCa, installPair, issueServingPair } from './certs.js';
import { freePort } from '../free-port.js';
import { review, samplePod } from './harness.js';
import { validateKubernetesObject } from './schema.js';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function runCli(args: string[], stdin = '', env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const MANIFESTS = `# shop web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # keep this comment
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web
      annotations:
        conndrain.io/drain: 45s
        conndrain.io/hook: exec
    spec:
      containers:
      - name: web
        image: nginx:1.27   # pinned
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:   {ports: [{port: 80}],   selector: {app: web}}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {conndrain.io/drain: "true"}
        spec:
          restartPolicy: OnFailure
          containers:
          - name: job
            image: job:1
`;

test('inject rewrites workloads in multi-document YAML, keeps comments, leaves other kinds byte for byte', () => {
  const result = injectManifests(MANIFESTS, DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(result.injected, 2);
  assert.equal(result.invalid, 0);
  assert.match(result.output, /^# shop web tier\n/);
  assert.match(result.output, /name: web # keep this comment/);
  assert.ok(result.output.includes('---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:   {ports: [{port: 80}],   selector: {app: web}}\n---\n'), result.output);
  const docs = parseAllDocuments(result.output);
  assert.ok(Array.isArray(docs));
  const [deployment, service, cron] = docs.map((d): Record<string, unknown> => d.toJS() as Record<string, unknown>);
  validateKubernetesObject('Deployment', deployment);
  validateKubernetesObject('CronJob', cron);
  assert.equal(service?.['kind'], 'Service');
  const container = (deployment as { spec: { template: { spec: { containers: Array<{ lifecycle: unknown }>; terminationGracePeriodSeconds: number } } } }).spec.template.spec;
  assert.deepEqual(container.containers[0]?.lifecycle, { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 45'] } } });
  assert.equal(container.terminationGracePeriodSeconds, 55);
  assert.deepEqual(result.messages, ['conndrain: deployment/web: drain hook injected into the pod template', 'conndrain: cronjob/nightly: drain hook injected into the pod template']);
  // Idempotent: running inject over its own output changes nothing.
  const again = injectManifests(result.output, DEFAULT_INJECT_CONFIG, seededRandom(2));
  assert.equal(again.output, result.output);
  assert.equal(again.injected, 0);
});

test('inject handles JSON (object, array, List) and refuses unparseable input', () => {
  const pod = JSON.stringify(samplePod());
  const single = injectManifests(pod, DEFAULT_INJECT_CONFIG, seededRandom(1));
  const injectedPod = JSON.parse(single.output) as Record<string, unknown>;
  validateKubernetesObject('Pod', injectedPod);
  assert.match(JSON.stringify(injectedPod), /"conndrain.io\/drain-id":"[0-9a-f]{32}"/);
  const list = injectManifests(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [samplePod(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }] }), DEFAULT_INJECT_CONFIG, seededRandom(1));
  assert.equal(list.injected, 1);
  assert.deepEqual((JSON.parse(list.output) as { items: unknown[] }).items[1], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  const untouched = '{"kind": "ConfigMap"}\n';
  assert.equal(injectManifests(untouched, DEFAULT_INJECT_CONFIG, seededRandom(1)).output, untouched);
  assert.throws(() => injectManifests('{"kind": ', DEFAULT_INJECT_CONFIG, seededRandom(1)), ManifestError);
  assert.throws(() => injectManifests('a: [1, 2\nb: c\n', DEFAULT_INJECT_CONFIG, seededRandom(1)), /input is not valid YAML: document 1/);
});

test('conndrain inject -f - : stdout is the manifest, warnings on stderr, exit 1 on invalid annotations', async () => {
  const bad = `${MANIFESTS}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: typo\n  annotations:\n    conndrain.io/drain: 3x\nspec:\n  containers:\n  - name: a\n    image: b\n`;
  const run = await runCli(['inject', '-f', '-', '--default-hook', 'agent'], bad);
  assert.equal(run.code, 1, run.stderr);
  assert.ok(run.stdout.endsWith('kind: Pod\nmetadata:\n  name: typo\n  annotations:\n    conndrain.io/drain: 3x\nspec:\n  containers:\n  - name: a\n    image: b\n'), run.stdout);
  assert.match(run.stderr, /conndrain: pod\/typo: annotation conndrain.io\/drain="3x": "3x" is not a duration/);
  assert.match(run.stderr, /1 resource\(s\) have invalid drain annotations/);
  const good = await runCli(['inject'], MANIFESTS);
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout, /sleep 45/);
  const unreadable = await runCli(['inject', '-f', '/nonexistent/x.yaml']);
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /conndrain inject: cannot read \/nonexistent\/x.yaml: ENOENT/);
});

test('conndrain review prints the AdmissionReview response; bad config lists every problem, exit 2', async () => {
  const run = await runCli(['review', '--default-hook', 'exec'], review(samplePod()));
  assert.equal(run.code, 0, run.stderr);
  const body = JSON.parse(run.stdout) as { response: { uid: string; allowed: boolean; patch: string } };
  assert.equal(body.response.uid, 'e911857d-c318-11e8-bbad-025000000001');
  assert.match(Buffer.from(body.response.patch, 'base64').toString(), /"command":\["\/bin\/sh","-c","sleep 30"\]/);
  const rejected = await runCli(['review'], '{"apiVersion":"v1"}');
  assert.equal(rejected.code, 2);
  assert.equal(rejected.stdout, '');
  assert.match(rejected.stderr, /^<stdin>: expected apiVersion "admission.k8s.io\/v1".*\(the webhook would answer HTTP 400\)\n$/);
  const config = await runCli(['review', '--agent-port', '0'], '', { CONNDRAIN_MAX_DURATION: 'forever' });
  assert.equal(config.code, 2);
  assert.match(config.stderr, /--agent-port: 0 is out of range; expected 1..65535/);
  assert.match(config.stderr, /\$CONNDRAIN_MAX_DURATION: "forever" is not a duration/);
});

test('conndrain webhook serves, and on SIGTERM stops and exits 0', async () => {
  const ca = createTestCa();
  const certDir = mkdtempSync(join(tmpdir(), 'cdwh-cli-'));
  installPair(certDir, issueServingPair(ca));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'webhook', '--cert-dir', certDir, '--port', String(port), '--address', '127.0.0.1', '--shutdown-delay', '200ms', '--metrics-secure=false'], { cwd: ROOT });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  try {
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('webhook listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const listening = stdout.split('\n').find((l) => l.includes('webhook listening'));
    assert.ok(listening !== undefined, stdout);
    assert.equal((JSON.parse(listening) as { port: number }).port, port);
    // One admission: at info it is counted in the summary line, which must be out by exit.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port, method: 'POST', path: '/mutate', ca: ca.caCert, agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(review(samplePod()));
    });
    assert.equal(status, 200);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(stdout, /"msg":"stopping: \/readyz 503, serving through the delay, then finishing in-flight requests"/);
    assert.match(stdout, /"msg":"webhook stopped"/);
    // One info line per pod no more: the admission is in the summary (and at debug on its own).
    assert.doesNotMatch(stdout, /"msg":"drain hook injected"/);
    const summary = stdout.split('\n').find((l) => l.includes('"msg":"admissions answered since the last summary"'));
    assert.ok(summary !== undefined, stdout);
    assert.deepEqual((JSON.parse(summary) as { admissions: Record<string, number> }).admissions, { 'allowed/injected': 1 });
  } finally {
    child.kill('SIGKILL');
    rmSync(certDir, { recursive: true, force: true });
    ca.cleanup();
  }
});
