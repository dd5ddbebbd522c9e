/**
 * `kubectl conndrain check` against the API stand-in (test/apiserver): a whole install that
 * passes, then each failure the command exists to catch, one at a time; then the command
 * itself (exit codes, --json, an API server that is not there).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanKubeConnection } from '../../kube/connection.js';
import type { CheckResult } from '../../src/check/types.js';
import { FakeApiServer, type JsonObject } from '../../test/apiserver/server.js';
import { managedPod } from '../../test/apiserver/pods.js';
import { generateServingPair, type GeneratedPair } from '../../webhook/tls/generate.js';
import { serviceDnsNames } from '../../webhook/tls/self-signed.js';
import { runChecks, type CheckFlags } from './run.js';
import { VERSION } from '../version.js';

const NS = 'conndrain-system';
const AGENT_NS = 'conndrain-agent';
const FLAGS: CheckFlags = { namespace: NS, agentNamespace: AGENT_NS, webhookConfiguration: 'conndrain', tlsSecret: 'conndrain-webhook-tls' };
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const pairOf = (): Promise<GeneratedPair> => generateServingPair({ dnsNames: serviceDnsNames('conndrain-webhook', NS), now: new Date(), validityDays: 30 });

interface Install {
  pair: GeneratedPair;
  caBundle?: string;
  endpointsReady?: boolean;
  agentNodes?: string[];
  agentVersion?: string;
  webhookConfiguration?: boolean;
}

function agentPod(node: string): JsonObject {
  return {
    metadata: { name: `conndrain-agent-${node}`, namespace: AGENT_NS, labels: { 'app.kubernetes.io/name': 'conndrain', 'app.kubernetes.io/component': 'agent' } },
    spec: { nodeName: node, containers: [{ name: 'agent', image: 'ghcr.io/conndrain/conndrain-agent:0.1.0' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** The objects of an install on three nodes, one of them virtual (left out by the DaemonSet). */
function install(api: FakeApiServer, o: Install): void {
  if (o.webhookConfiguration !== false) {
    api.plain.putMutatingWebhookConfiguration({
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'conndrain' },
      webhooks: [{ name: 'pods.conndrain.io', clientConfig: { service: { name: 'conndrain-webhook', namespace: NS, path: '/mutate' }, caBundle: b64(o.caBundle ?? o.pair.caCert) } }],
    });
  }
  api.plain.putSecret({ metadata: { name: 'conndrain-webhook-tls', namespace: NS }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(o.pair.cert), 'tls.key': b64(o.pair.key), 'ca.crt': b64(o.pair.caCert) } });
  api.putEndpointSlice({
    metadata: { name: 'conndrain-webhook-abc', namespace: NS, labels: { 'kubernetes.io/service-name': 'conndrain-webhook' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.5'], conditions: { ready: o.endpointsReady ?? true } }, { addresses: ['10.0.0.6'], conditions: { ready: o.endpointsReady ?? true } }],
  });
  for (const name of ['node-1', 'node-2']) api.workloads.put('Node', { metadata: { name, labels: { 'kubernetes.io/os': 'linux' } } });
  api.workloads.put('Node', { metadata: { name: 'virtual-1', labels: { 'kubernetes.io/os': 'linux', type: 'virtual-kubelet' } } });
  const agentNodes = o.agentNodes ?? ['node-1', 'node-2'];
  api.workloads.put('DaemonSet', {
    metadata: { name: 'conndrain-agent', namespace: AGENT_NS },
    spec: { template: { spec: {
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] }] }] } } },
      containers: [{ name: 'agent', image: `ghcr.io/conndrain/conndrain-agent:${o.agentVersion ?? VERSION}` }],
    } } },
    status: { desiredNumberScheduled: 2, numberReady: agentNodes.length },
  });
  api.workloads.put('Deployment', {
    metadata: { name: 'conndrain-webhook', namespace: NS },
    spec: { template: { spec: { containers: [{ name: 'webhook', image: `ghcr.io/conndrain/conndrain-webhook:${VERSION}` }] } } },
  });
  for (const node of agentNodes) api.putPod(agentPod(node));
  api.putNamespace('shop', { 'conndrain.io/inject': 'enabled' });
  api.putNamespace('other');
  for (const i of [1, 2, 3]) api.putPod(managedPod({ name: `web-${i}`, nodeName: 'node-1', ips: [`10.3.0.${i}`] }));
}

async function checksOf(o: Install): Promise<Map<string, CheckResult>> {
  const api = new FakeApiServer();
  await api.start();
  try {
    install(api, o);
    const results = await runChecks(new LeanKubeConnection(api.url, {}, { kind: 'token', token: 'operator' }), FLAGS);
    return new Map(results.map((r) => [r.id, r]));
  } finally {
    await api.close();
  }
}

function failedIds(results: Map<string, CheckResult>): string[] {
  return [...results.values()].filter((r) => r.status === 'fail').map((r) => r.id);
}

describe('kubectl conndrain check', () => {
  it('passes a whole install, and describes the opted-in namespaces and the managed pods', async () => {
    const results = await checksOf({ pair: await pairOf() });
    assert.deepEqual(failedIds(results), []);
    assert.match(results.get('webhook.ca-bundle')?.summary ?? '', /verifies the serving certificate of conndrain-webhook\.conndrain-system\.svc/);
    assert.match(results.get('webhook.endpoints')?.summary ?? '', /2 ready endpoints/);
    assert.match(results.get('agent.nodes')?.summary ?? '', /each of 2 nodes/, 'the virtual node is not expected to run an agent');
    assert.deepEqual(results.get('namespaces.opted-in'), { id: 'namespaces.opted-in', status: 'info', summary: '1 namespace opted in; 3 pods managed (conndrain.io/managed)', details: ['shop'] });
  });

  it('fails when the MutatingWebhookConfiguration is missing', async () => {
    const results = await checksOf({ pair: await pairOf(), webhookConfiguration: false });
    assert.deepEqual(failedIds(results), ['webhook.configuration', 'webhook.ca-bundle', 'webhook.endpoints']);
    assert.match(results.get('webhook.configuration')?.fix ?? '', /kubectl apply -k manifests/);
  });

  it('fails when the caBundle does not verify the serving certificate', async () => {
    const other = await pairOf();
    const results = await checksOf({ pair: await pairOf(), caBundle: other.caCert });
    assert.deepEqual(failedIds(results), ['webhook.ca-bundle']);
    assert.match(results.get('webhook.ca-bundle')?.details?.[0] ?? '', /^pods\.conndrain\.io: the caBundle does not verify the serving certificate/);
    assert.match(results.get('webhook.ca-bundle')?.fix ?? '', /cainjector/);
  });

  it('fails when the serving certificate does not name the Service', async () => {
    const wrong = await generateServingPair({ dnsNames: ['elsewhere.example'], now: new Date(), validityDays: 30 });
    const results = await checksOf({ pair: wrong });
    assert.deepEqual(failedIds(results), ['webhook.ca-bundle']);
    assert.match(results.get('webhook.ca-bundle')?.details?.[0] ?? '', /does not name conndrain-webhook\.conndrain-system\.svc/);
  });

  it('fails when no webhook endpoint is ready', async () => {
    const results = await checksOf({ pair: await pairOf(), endpointsReady: false });
    assert.deepEqual(failedIds(results), ['webhook.endpoints']);
    assert.match(results.get('webhook.endpoints')?.summary ?? '', /no ready endpoint \(2 not ready\)/);
  });

  it('fails and names the node without an agent', async () => {
    const results = await checksOf({ pair: await pairOf(), agentNodes: ['node-1'] });
    assert.deepEqual(failedIds(results), ['agent.nodes']);
    assert.deepEqual(results.get('agent.nodes')?.details, ['node-2: no agent pod']);
    assert.match(results.get('agent.nodes')?.summary ?? '', /1 of 2 nodes without a ready agent \(DaemonSet 1\/2 ready\)/);
  });

  it('fails when the agent runs another version than the webhook and the CLI', async () => {
    const results = await checksOf({ pair: await pairOf(), agentVersion: '9.9.9' });
    assert.deepEqual(failedIds(results), ['versions']);
    assert.equal(results.get('versions')?.summary, `versions differ: webhook ${VERSION}, agent 9.9.9, CLI ${VERSION}`);
  });
});

describe('kubectl conndrain check, the command', () => {
  /** Without a server to answer: a blocking run is fine. */
  const run = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'cli/kubectl-main.ts', 'check', ...args], { cwd: new URL('../..', import.meta.url).pathname, encoding: 'utf8', timeout: 60_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it('exits 0 when every check passes, 1 when one fails (text and --json), 1 without an API server, 2 on bad usage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cd-check-'));
    const api = new FakeApiServer();
    await api.start();
    try {
      const pair = await pairOf();
      install(api, { pair });
      const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
      // The stand-in runs in this process: the command runs as an async child so it can answer.
      const good = await runAsync(['--kubeconfig', kubeconfig, '-n', NS]);
      assert.equal(good.status, 0, good.stderr);
      assert.match(good.stdout, /^\[ok {2}\] webhook\.configuration: /m);
      assert.match(good.stdout, /all 5 checks passed/);
      api.workloads.put('DaemonSet', { metadata: { name: 'conndrain-agent', namespace: AGENT_NS }, spec: { template: { spec: { containers: [{ image: 'x/agent:9.9.9' }] } } }, status: {} });
      const bad = await runAsync(['--kubeconfig', kubeconfig, '--json']);
      assert.equal(bad.status, 1, bad.stderr);
      const parsed = JSON.parse(bad.stdout) as { ok: boolean; checks: CheckResult[] };
      assert.equal(parsed.ok, false);
      assert.ok(parsed.checks.some((c) => c.id === 'versions' && c.status === 'fail' && c.fix !== undefined));
      assert.equal(run(['--frobnicate']).status, 2);
    } finally {
      await api.close();
    }
    const gone = await runAsync(['--kubeconfig', join(dir, 'kubeconfig')]);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /cannot reach the API server/);
    rmSync(dir, { recursive: true, force: true });
  });
});

async function runAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/kubectl-main.ts', 'check', ...args], { cwd: new URL('../..', import.meta.url).pathname });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
}
