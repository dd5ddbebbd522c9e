/**
 * The webhook image's build stage, replayed without Docker: exactly the files its COPY lines
 * bring in (after .dockerignore) go into a scratch directory, the stage's `npm run build`
 * (tsc) runs there, and the runtime stage's files then run `conndrain webhook` with the
 * rendered Deployment's own args, with no native addon present: real HTTPS (a certificate for
 * the Certificate's DNS names, from openssl), the probe paths, /metrics and one AdmissionReview.
 * node_modules is linked from this checkout instead of `npm ci` (no registry access in
 * tests), so this proves the source list and the runtime files, not the dependency install.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_OPTIONS } from '../../src/config/agent.js';
import { WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import { parseArgs } from './cli-args.js';
import { copiesOf, isIgnored, parseDockerfile } from './dockerfile.js';
import { AGENT_DAEMONSET, daemonSet, deployment, onlyContainer, WEBHOOK_CERTIFICATE, WEBHOOK_DEPLOYMENT } from './objects.js';
import { KUBECTL_MISSING, pick, render, renderAll, REPO_ROOT } from './render.js';
import { writeServingPair } from './tls-fixture.js';

const webhook = parseDockerfile(readFileSync(join(REPO_ROOT, 'images/webhook.Dockerfile'), 'utf8'));
const agent = parseDockerfile(readFileSync(join(REPO_ROOT, 'images/agent.Dockerfile'), 'utf8'));
const dockerignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');

function contextSources(stageName: string, stages: typeof webhook): string[] {
  const stage = stages.find((s) => s.name === stageName);
  return stage === undefined ? [] : copiesOf(stage).filter((c) => c.from === undefined).flatMap((c) => c.sources);
}

/** Copies a context path the way the Docker builder would: ignored files stay out. */
function copyContext(source: string, into: string): void {
  cpSync(join(REPO_ROOT, source), join(into, source), {
    recursive: true,
    filter: (path) => path === join(REPO_ROOT, source) || !isIgnored(path.slice(REPO_ROOT.length), dockerignore),
  });
}

/** The image runs compiled JavaScript with plain node: without test/run.mjs's conndrain-source condition. */
const PLAIN_NODE = { ...process.env, NODE_OPTIONS: (process.env.NODE_OPTIONS ?? '').replace(/--conditions=conndrain-source/g, '').trim() };

describe('webhook image build, replayed', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'cdimg-'));
  const buildDir = join(scratch, 'src');
  const appDir = join(scratch, 'app');
  let tsc: ReturnType<typeof spawnSync> | undefined;

  before(() => {
    mkdirSync(buildDir);
    for (const source of contextSources('build', webhook)) copyContext(source, buildDir);
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(buildDir, 'node_modules'));
    tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: buildDir, encoding: 'utf8' });
    mkdirSync(join(appDir, 'bin'), { recursive: true });
    if (existsSync(join(buildDir, 'dist'))) cpSync(join(buildDir, 'dist'), join(appDir, 'dist'), { recursive: true });
    cpSync(join(buildDir, 'package.json'), join(appDir, 'package.json'));
    cpSync(join(REPO_ROOT, 'bin/conndrain.mjs'), join(appDir, 'bin/conndrain.mjs'));
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(appDir, 'node_modules'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('the agent image compiles the same TypeScript sources', () => {
    const ts = (sources: string[]): string[] => sources.filter((s) => !s.startsWith('native/') || ['native/lib', 'native/package.json', 'native/tsconfig.json'].includes(s)).sort();
    assert.deepEqual(ts(contextSources('build', agent)), ts(contextSources('build', webhook)));
  });

  it('tsc compiles what the build stage copies, nothing missing', () => {
    assert.equal(tsc?.status, 0, `${String(tsc?.stdout)}${String(tsc?.stderr)}`);
    assert.ok(existsSync(join(buildDir, 'dist/cli/main.js')));
    assert.ok(!existsSync(join(buildDir, 'native/src')) && !existsSync(join(buildDir, 'native/binding.gyp')), 'no C sources in the webhook build');
  });

  it('the runtime files start the CLI without the native addon', () => {
    assert.ok(!existsSync(join(appDir, 'native')), 'no addon in the webhook image');
    const help = spawnSync(process.execPath, [join(appDir, 'bin/conndrain.mjs'), '--help'], { cwd: dirname(appDir), encoding: 'utf8', env: PLAIN_NODE });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: conndrain/);
  });

  for (const [command, specs, container] of [
    ['webhook', WEBHOOK_OPTIONS, (path: string) => onlyContainer(deployment(render(path), WEBHOOK_DEPLOYMENT))],
    ['agent', AGENT_OPTIONS, (path: string) => onlyContainer(daemonSet(render(path), AGENT_DAEMONSET))],
  ] as const) {
    it(`\`conndrain ${command} --help\` lists every flag the manifests pass`, { skip: KUBECTL_MISSING }, () => {
      const help = spawnSync(process.execPath, [join(appDir, 'bin/conndrain.mjs'), command, '--help'], { encoding: 'utf8', env: PLAIN_NODE });
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, new RegExp(`Usage: conndrain ${command}`));
      const flags = new Set(renderAll().flatMap(([path]) => [...parseArgs(container(path).args ?? [], specs).flags.keys()]));
      assert.ok(flags.size > 0);
      for (const flag of flags) assert.match(help.stdout, new RegExp(`--${flag}\\b`), `--${flag}`);
    });
  }

  describe('`conndrain webhook` from the image files, with the Deployment\'s args', { skip: KUBECTL_MISSING }, () => {
    let child: ChildProcess | undefined;
    let output = '';
    let port = 0;
    let ca = '';
    let serverName = '';
    const objects = KUBECTL_MISSING === undefined ? render('manifests') : [];

    before(async () => {
      const certDir = join(scratch, 'tls');
      mkdirSync(certDir);
      const dnsNames = (pick(objects, 'Certificate', WEBHOOK_CERTIFICATE).spec as { dnsNames: string[] }).dnsNames;
      serverName = dnsNames.find((n) => n.endsWith('.svc')) ?? '';
      ca = writeServingPair(scratch, certDir, dnsNames).ca;
      port = await freePort();
      const args = (onlyContainer(deployment(objects, WEBHOOK_DEPLOYMENT)).args ?? [])
        .map((a) => (a.startsWith('--port=') ? `--port=${port}` : a.startsWith('--cert-dir=') ? `--cert-dir=${certDir}` : a));
      child = spawn(process.execPath, [join(appDir, 'bin/conndrain.mjs'), ...args, '--address=127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'], env: PLAIN_NODE });
      child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
      await waitFor(async () => (await get(port, '/readyz', ca, serverName)).status === 200, 20_000, () => output);
    });
    after(async () => {
      if (child === undefined || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    });

    it('answers the Deployment\'s readiness and liveness paths over TLS verified for the Service name', async () => {
      const container = onlyContainer(deployment(objects, WEBHOOK_DEPLOYMENT));
      for (const probe of [container.readinessProbe, container.livenessProbe]) {
        assert.equal(probe?.httpGet?.scheme, 'HTTPS');
        assert.equal((await get(port, probe.httpGet.path ?? '', ca, serverName)).status, 200);
      }
    });

    it('serves conndrain metrics on /metrics', async () => {
      const metrics = await get(port, '/metrics', ca, serverName);
      assert.equal(metrics.status, 200);
      assert.match(metrics.body, /conndrain_webhook_admission/);
    });

    it('injects a pod (no native addon needed)', async () => {
      const review = {
        apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
        request: {
          uid: '7f0e4c3a-0000-4000-8000-000000000001', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' },
          namespace: 'shop', operation: 'CREATE', userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
          object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'checkout-', namespace: 'shop', annotations: { 'conndrain.io/drain': '30s' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
        },
      };
      const answer = await post(port, '/mutate', JSON.stringify(review), ca, serverName);
      assert.equal(answer.status, 200, answer.body);
      const response = (JSON.parse(answer.body) as { response: { uid: string; allowed: boolean; patchType?: string; patch?: string } }).response;
      assert.equal(response.uid, review.request.uid);
      assert.equal(response.allowed, true);
      assert.equal(response.patchType, 'JSONPatch');
      assert.match(Buffer.from(response.patch ?? '', 'base64').toString(), /preStop/);
    });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface Answer {
  status: number;
  body: string;
}

function call(port: number, method: string, path: string, body: string | undefined, ca: string, servername: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, ca, servername, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const get = (port: number, path: string, ca: string, servername: string): Promise<Answer> => call(port, 'GET', path, undefined, ca, servername);
const post = (port: number, path: string, body: string, ca: string, servername: string): Promise<Answer> => call(port, 'POST', path, body, ca, servername);

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, explain: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the webhook did not become ready in ${timeoutMs} ms; its output:\n${explain()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
