/**
 * One exit-code rule for every command (docs/cli-errors.md), as a table of commands x bad
 * inputs run through the real entry points (`conndrain`, `kubectl conndrain`):
 *   2  the command line or an input is wrong: ONE line on stderr, nothing on stdout;
 *   1  the input was fine, the answer is "no" (a resource the webhook would deny): the whole
 *      output is written first, then the reason on stderr;
 *   0  done.
 * The kernel-side commands' operational failures (netlink, namespaces) have their own table:
 * cli/cli-errors.kernel.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { review, samplePod } from '../webhook/harness.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'cdexit-'));
const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const POD = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    conndrain.io/drain: 20s\nspec:\n  containers:\n    - name: app\n      image: nginx\n';
const TYPO_POD = POD.replace('20s', '3x');
const empty = file('empty.yaml', '');
const scalar = file('scalar.yaml', 'hello\n');
const binary = file('binary.yaml', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00]));
const kindless = file('kindless.yaml', 'apiVersion: v1\nmetadata: {name: x}\n');
const badYaml = file('bad.yaml', 'apiVersion: v1\nkind: Pod\nspec: [1, 2\nx: y\n');
const badJson = file('bad.json', '{\n  "apiVersion": "v1",\n  "kind": }\n');
const pod = file('pod.yaml', POD);
const emptyDir = join(dir, 'nothing');
mkdirSync(emptyDir);
file('nothing/readme.txt', 'not a manifest');
const badEndpoints = file('endpoints.yaml', 'just text\n');
const noSlices = file('no-slices.yaml', 'apiVersion: v1\nkind: List\nitems: []\n');
/** Two contexts on a server nothing listens on (port 9). */
const kubeconfig = file('kubeconfig', ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: c', '  cluster: {server: "https://127.0.0.1:9"}', 'users:', '- name: u', '  user: {token: t}', 'contexts:', '- name: x', '  context: {cluster: c, user: u}', '- name: y', '  context: {cluster: c, user: u}', 'current-context: x', ''].join('\n'));

interface Case {
  name: string;
  entry: 'main' | 'kubectl-main';
  args: string[];
  stdin?: string | Buffer;
  code: 0 | 1 | 2;
  /** What stderr says (code 2: its one line). */
  stderr?: RegExp;
  /** What stdout holds (codes 0 and 1). */
  stdout?: RegExp;
}

const CASES: Case[] = [
  // inject
  { name: 'inject: empty stdin', entry: 'main', args: ['inject'], stdin: '', code: 2, stderr: /^<stdin>: no Kubernetes object: the input is empty$/ },
  { name: 'inject: an empty file', entry: 'main', args: ['inject', '-f', empty], code: 2, stderr: /empty\.yaml: no Kubernetes object/ },
  { name: 'inject: a bare scalar', entry: 'main', args: ['inject', '-f', scalar], code: 2, stderr: /scalar\.yaml:1:1: not a Kubernetes object: a bare string/ },
  { name: 'inject: binary input', entry: 'main', args: ['inject', '-f', binary], code: 2, stderr: /binary\.yaml: binary input, not YAML or JSON$/ },
  { name: 'inject: binary stdin', entry: 'kubectl-main', args: ['inject', '-f', '-'], stdin: Buffer.from([0xff, 0xfe, 0x00]), code: 2, stderr: /^<stdin>: binary input/ },
  { name: 'inject: no apiVersion or kind', entry: 'main', args: ['inject', '-f', kindless], code: 2, stderr: /kindless\.yaml:1:1: not a Kubernetes object: no kind$/ },
  { name: 'inject: a YAML error', entry: 'main', args: ['inject', '-f', badYaml], code: 2, stderr: /bad\.yaml:4:1: invalid YAML: / },
  { name: 'inject: a JSON error', entry: 'main', args: ['inject', '-f', badJson], code: 2, stderr: /bad\.json:3:11: invalid JSON: / },
  { name: 'inject: a good file then a bad one writes nothing', entry: 'main', args: ['inject', '-f', pod, '-f', scalar], code: 2, stderr: /scalar\.yaml:1:1: / },
  { name: 'inject: a missing file', entry: 'main', args: ['inject', '-f', join(dir, 'nope.yaml')], code: 2, stderr: /^conndrain inject: cannot read .*nope\.yaml: ENOENT/ },
  { name: 'inject: a directory without manifests', entry: 'main', args: ['inject', '-f', emptyDir], code: 2, stderr: /^conndrain inject: .*nothing: no \.yaml, \.yml or \.json files/ },
  { name: 'inject: stdin twice', entry: 'main', args: ['inject', '-f', '-', '-f', '-'], stdin: POD, code: 2, stderr: /given more than once$/ },
  { name: 'inject: an unknown option', entry: 'main', args: ['inject', '--bogus'], code: 2, stderr: /^conndrain inject: unknown option '--bogus'; options: / },
  { name: 'inject: a bad option value', entry: 'main', args: ['inject', '--agent-port', '0', '-f', pod], code: 2, stderr: /^conndrain: invalid configuration: --agent-port: 0 is out of range/ },
  { name: 'inject: -n (no API server involved)', entry: 'kubectl-main', args: ['-n', 'shop', 'inject', '-f', pod], code: 2, stderr: /^kubectl conndrain inject: -n does not apply: inject does not talk to the API server$/ },
  { name: 'inject: --context after the command', entry: 'kubectl-main', args: ['inject', '--context=prod', '-f', pod], code: 2, stderr: /^kubectl conndrain inject: --context does not apply/ },
  { name: 'inject: a pod the webhook would deny', entry: 'main', args: ['inject'], stdin: TYPO_POD, code: 1, stdout: /conndrain\.io\/drain: 3x/, stderr: /1 resource\(s\) have invalid drain annotations/ },
  { name: 'inject: a good pod', entry: 'kubectl-main', args: ['inject', '-f', pod], code: 0, stdout: /preStop:/ },
  // review
  { name: 'review: empty stdin', entry: 'main', args: ['review'], stdin: '', code: 2, stderr: /^<stdin>: request body is empty; .*\(the webhook would answer HTTP 400\)$/ },
  { name: 'review: not JSON', entry: 'main', args: ['review'], stdin: 'apiVersion: v1\n', code: 2, stderr: /^<stdin>: request body is not valid JSON/ },
  { name: 'review: binary', entry: 'main', args: ['review'], stdin: Buffer.from([0x00, 0x01]), code: 2, stderr: /^<stdin>: binary input/ },
  { name: 'review: a Pod instead of a review', entry: 'kubectl-main', args: ['review'], stdin: JSON.stringify(samplePod()), code: 2, stderr: /^<stdin>: expected apiVersion "admission\.k8s\.io\/v1"/ },
  { name: 'review: an unknown option', entry: 'main', args: ['review', '--bogus'], stdin: '', code: 2, stderr: /^conndrain review: unknown option '--bogus'/ },
  { name: 'review: --kubeconfig', entry: 'kubectl-main', args: ['review', '--kubeconfig', '/dev/null'], stdin: '', code: 2, stderr: /^kubectl conndrain review: --kubeconfig does not apply/ },
  { name: 'review: a pod the webhook would deny', entry: 'main', args: ['review'], stdin: review(samplePod({ 'conndrain.io/drain': '3x' })), code: 1, stdout: /"allowed": false/, stderr: /^conndrain review: denied: / },
  { name: 'review: a good review', entry: 'main', args: ['review'], stdin: review(samplePod()), code: 0, stdout: /"allowed": true/ },
  // stale (the input errors come before any netlink work)
  { name: 'stale: -n', entry: 'kubectl-main', args: ['stale', '-n', 'shop'], code: 2, stderr: /^kubectl conndrain stale: -n does not apply to stale \(it takes --kubeconfig, --context\)$/ },
  { name: 'stale: --endpoints with --context', entry: 'kubectl-main', args: ['--context', 'prod', 'stale', '--endpoints', badEndpoints], code: 2, stderr: /cannot be used with option '--context <name>'/ },
  { name: 'stale: an endpoints file that is not one', entry: 'kubectl-main', args: ['stale', '--endpoints', badEndpoints], code: 2, stderr: /endpoints\.yaml: no Kubernetes object in the file/ },
  { name: 'stale: --delete with no EndpointSlice', entry: 'main', args: ['conntrack', 'stale', '--delete', '--endpoints', noSlices], code: 2, stderr: /^conndrain conntrack stale: no EndpointSlice in .*: --delete would delete every NAT'ed entry; refused$/ },
  { name: 'stale: a context the kubeconfig lacks', entry: 'kubectl-main', args: ['--kubeconfig', kubeconfig, '--context', 'z', 'stale'], code: 2, stderr: /^kubectl conndrain stale: kubeconfig: no context named z$/ },
  { name: 'stale: the API server unreachable (operational)', entry: 'kubectl-main', args: ['--context', 'y', 'stale', '--kubeconfig', kubeconfig], code: 1, stderr: /^kubectl conndrain stale: https:\/\/127\.0\.0\.1:9: .*ECONNREFUSED/ },
  { name: 'stale: a missing endpoints file', entry: 'main', args: ['conntrack', 'stale', '--endpoints', join(dir, 'nope.yaml')], code: 2, stderr: /ENOENT/ },
  // doctor, version
  { name: 'doctor: --context', entry: 'kubectl-main', args: ['doctor', '--context', 'prod'], code: 2, stderr: /^kubectl conndrain doctor: --context does not apply: doctor does not talk to the API server$/ },
  { name: 'doctor: an unknown option', entry: 'main', args: ['doctor', '--bogus'], code: 2, stderr: /^conndrain doctor: unknown option '--bogus'/ },
  { name: 'version: an argument', entry: 'kubectl-main', args: ['version', 'extra'], code: 2, stderr: /^kubectl conndrain version: too many arguments/ },
  { name: 'version', entry: 'kubectl-main', args: ['version'], code: 0, stdout: /^\d+\.\d+\.\d+\n$/ },
  { name: 'an unknown command', entry: 'kubectl-main', args: ['nosuch'], code: 2, stderr: /^kubectl conndrain: unknown command 'nosuch'/ },
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(entry: Case['entry'], args: string[], stdin: string | Buffer = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `cli/${entry}.ts`, ...args], { cwd: ROOT, env: { ...process.env, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

describe('exit codes: every command, one rule', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const c of CASES) {
    it(`${c.name} -> ${c.code}`, async () => {
      const run = await runCli(c.entry, c.args, c.stdin);
      const context = `stdout: ${run.stdout.slice(0, 500)}\nstderr: ${run.stderr}`;
      assert.equal(run.code, c.code, context);
      if (c.code === 2) {
        assert.equal(run.stdout, '', context);
        assert.match(run.stderr, /^[^\n]+\n$/, `stderr is not one line: ${context}`);
      }
      if (c.stderr !== undefined) assert.match(run.stderr.split('\n').filter((l) => l !== '').at(-1) ?? '', c.stderr, context);
      if (c.stdout !== undefined) assert.match(run.stdout, c.stdout, context);
    });
  }
});
