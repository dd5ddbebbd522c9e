/**
 * The webhook image's build stage, replayed without Docker: exactly the files its COPY lines
 * bring in (after .dockerignore) go into a scratch directory, the stage's `npm run build`
 * (tsc) runs there, and the runtime stage's files then start the CLI with no native addon
 * present. node_modules is linked from this checkout instead of `npm ci` (no registry access
 * in tests), so this proves the source list, not the dependency install.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { copiesOf, isIgnored, parseDockerfile } from './dockerfile.js';
import { REPO_ROOT } from './render.js';

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
    const ts = (sources: string[]): string[] => sources.filter((s) => !s.startsWith('native/') || s === 'native/lib').sort();
    assert.deepEqual(ts(contextSources('build', agent)), ts(contextSources('build', webhook)));
  });

  it('tsc compiles what the build stage copies, nothing missing', () => {
    assert.equal(tsc?.status, 0, `${String(tsc?.stdout)}${String(tsc?.stderr)}`);
    assert.ok(existsSync(join(buildDir, 'dist/cli/main.js')));
    assert.ok(!existsSync(join(buildDir, 'native/src')) && !existsSync(join(buildDir, 'native/binding.gyp')), 'no C sources in the webhook build');
  });

  it('the runtime files start the CLI without the native addon', () => {
    assert.ok(!existsSync(join(appDir, 'native')), 'no addon in the webhook image');
    const help = spawnSync(process.execPath, [join(appDir, 'bin/conndrain.mjs'), '--help'], { cwd: dirname(appDir), encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: conndrain/);
  });

  it('`conndrain webhook --help` lists the flags the manifests pass', (t) => {
    const help = spawnSync(process.execPath, [join(appDir, 'bin/conndrain.mjs'), 'webhook', '--help'], { encoding: 'utf8' });
    if (!help.stdout.includes('Usage: conndrain webhook')) {
      t.skip('the webhook command is not registered in cli/main.ts yet');
      return;
    }
    for (const flag of ['--port', '--cert-dir', '--log-level', '--default-hook', '--agent-port']) assert.ok(help.stdout.includes(flag), flag);
  });
});
