/**
 * Every command that can print a large output writes all of it before it exits, whatever the
 * exit code, even into a pipe whose reader is slow (issue: `conndrain inject -f big.yaml |
 * kubectl apply -f -` received 255,808 of 289,081 bytes when inject exited 1).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INJECT_CONFIG } from '../../src/config/webhook.js';
import { seededRandom } from '../../src/inject/index.js';
import { injectManifests } from '../../cli/manifest/inject-manifests.js';
import { review } from '../webhook/harness.js';
import { runCliIntoSlowReader, sha256 } from './slow-pipe.js';

/** About 600 KB of YAML: ConfigMaps passed through, and one Pod with an invalid annotation. */
function bigManifest(): string {
  const docs: string[] = [];
  for (let i = 0; i < 1500; i++) {
    docs.push(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-${i}\ndata:\n  payload: "${'x'.repeat(300)}"\n`);
  }
  docs.push('apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n  annotations:\n    conndrain.io/drain: "30s"\n    conndrain.io/hook: "sleeep"\nspec:\n  containers:\n    - name: app\n      image: app:1\n');
  return docs.join('---\n');
}

test('inject exiting 1 (an invalid annotation) writes its whole output into a slow pipe', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cd-pipe-'));
  try {
    const text = bigManifest();
    const file = join(dir, 'big.yaml');
    writeFileSync(file, text);
    const expected = injectManifests(text, DEFAULT_INJECT_CONFIG, seededRandom(1)).output;
    assert.equal(expected, text, 'nothing is rewritten: the output is the input, byte for byte');
    const run = await runCliIntoSlowReader(['inject', '-f', file]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /1 resource\(s\) have invalid drain annotations/);
    assert.equal(run.bytes, Buffer.byteLength(expected));
    assert.equal(run.sha256, sha256(expected));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('review writes a large answer whole into a slow pipe', async () => {
  const containers = Array.from({ length: 2000 }, (_, i) => ({ name: `c${i}`, image: `registry.example/app:${i}` }));
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'many', namespace: 'shop', annotations: { 'conndrain.io/drain': '30s' } }, spec: { containers } };
  const run = await runCliIntoSlowReader(['review'], { stdin: review(pod) });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.bytes > 256 * 1024, `answer of ${run.bytes} bytes`);
});
