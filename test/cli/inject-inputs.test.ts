/**
 * `conndrain inject` reading several inputs as kubectl reads `-f`: every `-f` in order, a
 * directory's manifests (with -R its subdirectories'), `-` for stdin among them; one YAML
 * stream out, each input's documents as they came, separated by `---`. What inject did not
 * change keeps its spelling: comments, flow sequences and mappings.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function inject(args: string[], stdin = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'inject', '--default-hook', 'sleep', ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const POD = `# the web pod
apiVersion: v1
kind: Pod
metadata:
  name: web # keep this
  annotations: {conndrain.io/drain: 20s}
spec:
  containers:
    - name: app
      image: nginx
      args: [--port, "8080"]   # flow sequence
      env: [{name: A, value: b}]
`;
const SERVICE = 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n';
const CONFIG = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}\n';

describe('inject -f, several inputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdinject-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'tree/sub'), { recursive: true });
  writeFileSync(join(dir, 'pod.yaml'), POD);
  writeFileSync(join(dir, 'tree/b-service.yml'), SERVICE);
  writeFileSync(join(dir, 'tree/a-config.json'), CONFIG);
  writeFileSync(join(dir, 'tree/notes.md'), '# not a manifest\n');
  writeFileSync(join(dir, 'tree/sub/pod.yaml'), POD.replace('name: web', 'name: deep'));

  it('keeps every -f in order, a directory\'s manifests by name, stdin where `-` stands', async () => {
    const run = await inject(['-f', join(dir, 'tree'), '-f', '-', '-f', join(dir, 'pod.yaml')], SERVICE.replace('web', 'from-stdin'));
    assert.equal(run.code, 0, run.stderr);
    const names = parseAllDocuments(run.stdout).map((doc) => (doc.toJS() as { metadata: { name: string } }).metadata.name);
    assert.deepEqual(names, ['c', 'web', 'from-stdin', 'web']);
    assert.equal(run.stderr, `conndrain: ${join(dir, 'pod.yaml')}: pod/web: drain hook injected (sleep on app)\n`);
  });

  it('reads subdirectories with -R only', async () => {
    const flat = await inject(['-f', join(dir, 'tree')]);
    assert.doesNotMatch(flat.stdout, /name: deep/);
    const deep = await inject(['-R', '-f', join(dir, 'tree')]);
    assert.equal(deep.code, 0, deep.stderr);
    assert.match(deep.stdout, /name: deep/);
  });

  it('keeps the comments, flow sequences and mappings it did not change', async () => {
    const run = await inject(['-f', join(dir, 'pod.yaml')]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^# the web pod\n/);
    assert.match(run.stdout, /name: web # keep this\n/);
    assert.match(run.stdout, /args: \[--port, "8080"\] # flow sequence\n/);
    assert.match(run.stdout, /env: \[\{name: A, value: b\}\]\n/);
    assert.match(run.stdout, /preStop:/);
  });

  it('passes an input it does not change byte for byte', async () => {
    const run = await inject(['-f', '-'], SERVICE);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, SERVICE);
  });
});
