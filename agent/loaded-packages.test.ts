/**
 * The packages a node agent loads. Every node runs one, so a library its modules pull in by
 * accident is memory on every node: the YAML parser came with the janitor through the
 * `src/stale` barrel (72 modules, ~0.5 MiB of heap and more while they compile), and
 * `@kubernetes/client-node`'s root evaluates every generated client (docs/design/agent.md).
 * client-node is loaded only for kubeconfig users the lean connection does not speak
 * (kube/load.ts, a dynamic import); the others belong to the CLI and the webhook. The secure
 * /metrics (the DaemonSet's default) made its self-signed certificate with @peculiar/x509,
 * imported when the server starts: with tsyringe, reflect-metadata, the asn1 schemas and
 * WebCrypto it stayed loaded on every node (docs/scale.md); src/x509 encodes it now.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What the agent's process must not load. */
const NOT_FOR_THE_AGENT = ['yaml', '@kubernetes/client-node', 'express', 'fast-json-patch', 'commander'];
/** The agent's entry and the modules it imports at run time (the janitor, on by default). */
const AGENT_MODULES = ['./agent/run-agent.ts', './agent/agent.ts', './agent/stale/index.ts', './agent/conntrack/index.ts'];

/** What the agent's /metrics must not load to make its certificate. */
const NOT_FOR_THE_CERTIFICATE = ['@peculiar/x509', 'tsyringe', 'reflect-metadata', '@peculiar/asn1-schema'];

/** The npm packages (by name) a fresh node process has loaded after importing `modules` (and running `then`). */
function packagesLoadedBy(modules: readonly string[], then: readonly string[] = []): string[] {
  const script = [
    "import { createRequire } from 'node:module';",
    ...modules.map((m) => `await import(${JSON.stringify(m)});`),
    ...then,
    'const cache = createRequire(import.meta.url).cache;',
    "const names = new Set(Object.keys(cache).map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(p)?.[1]).filter((n) => n !== undefined));",
    'process.stdout.write(JSON.stringify([...names].sort()));',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=conndrain-source', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as string[];
}

test('the agent and the modules it loads at run time load no YAML parser, API client library, web framework or CLI parser', () => {
  const loaded = packagesLoadedBy(AGENT_MODULES);
  // The probe sees CommonJS packages: prom-client is one the agent does load.
  assert.ok(loaded.includes('prom-client'), `the probe saw no package at all: ${loaded.join(', ')}`);
  assert.deepEqual(loaded.filter((name) => NOT_FOR_THE_AGENT.includes(name)), []);
});

test('the probe sees a package the CLI loads (yaml, through the inventory parser)', () => {
  assert.ok(packagesLoadedBy(['./src/stale/inventory-file.ts']).includes('yaml'));
});

test('the secure /metrics makes its self-signed certificate without an X.509 library', () => {
  const loaded = packagesLoadedBy(
    ['./agent/runtime/metrics-server.ts', './kube/connection.ts', 'prom-client', 'pino'],
    [
      "const { createMetricsServer } = await import('./agent/runtime/metrics-server.ts');",
      "const { LeanKubeConnection } = await import('./kube/connection.ts');",
      "const { Registry } = await import('prom-client');",
      "const { pino } = await import('pino');",
      "const server = await createMetricsServer({ secure: true, certFile: '', keyFile: '', dnsNames: ['node-1'], kube: new LeanKubeConnection('https://127.0.0.1:1', {}, { kind: 'none' }), registry: new Registry(), logger: pino({ level: 'silent' }) });",
      "if (typeof server.listen !== 'function') throw new Error('no server');",
    ],
  );
  assert.ok(loaded.includes('prom-client'), `the probe saw no package at all: ${loaded.join(', ')}`);
  assert.deepEqual(loaded.filter((name) => NOT_FOR_THE_CERTIFICATE.includes(name) || NOT_FOR_THE_AGENT.includes(name)), []);
});
