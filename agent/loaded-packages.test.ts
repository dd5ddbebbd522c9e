/**
 * The packages a node agent loads. Every node runs one, so a library its modules pull in by
 * accident is memory on every node: the YAML parser came with the janitor through the
 * `src/stale` barrel (72 modules, ~0.5 MiB of heap and more while they compile), and
 * `@kubernetes/client-node`'s root evaluates every generated client (docs/design/agent.md).
 * client-node is loaded only for kubeconfig users the lean connection does not speak
 * (kube/load.ts, a dynamic import); the others belong to the CLI and the webhook.
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

/** The npm packages (by name) a fresh node process has loaded after importing `modules`. */
function packagesLoadedBy(modules: readonly string[]): string[] {
  const script = [
    "import { createRequire } from 'node:module';",
    ...modules.map((m) => `await import(${JSON.stringify(m)});`),
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
