#!/usr/bin/env node
// Runs the test suites with node's own test runner (TypeScript through tsx). The condition
// conndrain-source makes `import 'netlink-native'` load the package's TypeScript sources
// (native/lib) instead of its compiled dist/ (native/package.json `exports`); it is also put
// in NODE_OPTIONS so that every node process a test starts (the CLI, agents) does the same.
//   unit:   *.test.ts          (no privileges)
//   kernel: *.kernel.test.ts   (root: network namespaces on the host kernel's conntrack)
//   vm:     *.vm.test.ts       (boots Debian's kernel under QEMU for IPVS)
//   image:  *.image.test.ts    (root: builds images/*.Dockerfile with buildah and runs them; minutes)
// No --test-force-exit: with it, node's runner drops the verdicts of tests that ran when files run
// concurrently (nodejs/node#64833: a file's last results missing from the report, exit code 0). A file
// that leaves a handle open is a bug for its own test to catch (agent/agent-stop.test.ts); the whole run
// has a time limit (SUITE_TIMEOUT_MS) so that such a file fails CI instead of hanging it.
// `node test/run.mjs` runs all four; `--suite NAME` (repeatable) picks; extra args filter by path.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const SKIP = new Set(['node_modules', 'dist', 'build', '.git', 'results']);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

function suiteOf(file) {
  if (file.endsWith('.kernel.test.ts')) return 'kernel';
  if (file.endsWith('.vm.test.ts')) return 'vm';
  if (file.endsWith('.image.test.ts')) return 'image';
  return 'unit';
}

const args = process.argv.slice(2);
const suites = new Set();
const filters = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--suite') suites.add(args[++i]);
  else filters.push(args[i]);
}
const files = ['src', 'log', 'time', 'kube', 'webhook', 'agent', 'native', 'cli', 'test', 'lab', 'bench', 'manifests']
  .flatMap((dir) => { try { return walk(join(root, dir), []); } catch { return []; } })
  .filter((f) => suites.size === 0 || suites.has(suiteOf(f)))
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();

/** A file whose tests are done but which leaves a handle open keeps its process alive: the run fails here instead of hanging CI. */
const SUITE_TIMEOUT_MS = 75 * 60 * 1000;

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
  cwd: root,
  stdio: 'inherit',
  timeout: SUITE_TIMEOUT_MS,
  killSignal: 'SIGKILL',
  env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --conditions=conndrain-source`.trim() },
});
if (result.error !== undefined) console.error(`test/run.mjs: the tests did not end within ${SUITE_TIMEOUT_MS / 60000} minutes (a file that leaves a handle open keeps its process alive): ${result.error.message}`);
process.exit(result.status ?? 1);
