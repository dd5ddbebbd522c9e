/**
 * `npm run release`: one file per supported kustomization, each exactly what `kubectl
 * kustomize` renders for it (CRDs excluded), every object valid against the real schemas,
 * stamped with package.json's version, with a SHA256SUMS that `sha256sum -c` accepts. The
 * order is the one an upgrade and an uninstall rely on (docs/upgrade.md): the namespace
 * first, the MutatingWebhookConfiguration last, so `kubectl apply -f` creates the webhook's
 * Deployment and Service before the API server starts calling it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { packageVersion, RELEASE_OVERLAYS, sha256 } from '../../scripts/release/render.js';
import { findKustomizations, KUBECTL_MISSING, nameOf, render, REPO_ROOT, type KubeObject } from './render.js';
import { unknownFields, validateAgainstSchema } from './schemas.js';

describe('npm run release', { skip: KUBECTL_MISSING }, () => {
  const out = mkdtempSync(join(tmpdir(), 'cdrel-'));
  let run: ReturnType<typeof spawnSync> | undefined;
  const version = packageVersion();
  const read = (file: string): KubeObject[] => parseAllDocuments(readFileSync(join(out, file), 'utf8')).map((d) => d.toJS() as KubeObject).filter((o) => o !== null);

  before(() => {
    run = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/release/release.ts'), out, '--no-cli'], { cwd: REPO_ROOT, encoding: 'utf8' });
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('writes one file per supported kustomization and SHA256SUMS, from one command', () => {
    assert.equal(run?.status, 0, String(run?.stderr));
    assert.deepEqual(readdirSync(out).sort(), [...RELEASE_OVERLAYS.map(([name]) => `${name}.yaml`), 'SHA256SUMS'].sort());
  });

  it('ships every renderable overlay (none forgotten)', () => {
    const overlays = findKustomizations().filter((k) => k.kind === 'Kustomization' && (k.path === 'manifests' || k.path.startsWith('manifests/overlays/'))).map((k) => k.path).sort();
    assert.deepEqual(RELEASE_OVERLAYS.map(([, dir]) => dir).sort(), overlays);
  });

  it('SHA256SUMS lists every file with its digest', () => {
    const lines = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    assert.equal(lines.length, RELEASE_OVERLAYS.length);
    for (const line of lines) {
      const [digest, file] = line.split('  ');
      assert.equal(digest, sha256(readFileSync(join(out, file ?? ''))), `${file ?? ''}`);
    }
  });

  for (const [name, dir] of RELEASE_OVERLAYS) {
    describe(`${name}.yaml`, () => {
      it(`equals \`kubectl kustomize ${dir}\`, CRDs excluded`, () => {
        const expected = render(dir).filter((o) => o.kind !== 'CustomResourceDefinition');
        assert.deepEqual(read(`${name}.yaml`), expected);
      });

      it('validates every object against its schema, strictly', () => {
        const problems = read(`${name}.yaml`).flatMap((o) => [...validateAgainstSchema(o), ...unknownFields(o)].map((p) => `${nameOf(o)}: ${p}`));
        assert.deepEqual(problems, []);
      });

      it(`is version ${version}: header, version labels and image tags`, () => {
        assert.match(readFileSync(join(out, `${name}.yaml`), 'utf8'), new RegExp(`^# conndrain ${version.replace(/\./g, '\\.')}: `));
        const objects = read(`${name}.yaml`);
        // The base labels its objects; objects added by components carry no version label.
        assert.equal(objects.find((o) => o.kind === 'Namespace')?.metadata.labels?.['app.kubernetes.io/version'], version);
        for (const o of objects) assert.ok([undefined, version].includes(o.metadata.labels?.['app.kubernetes.io/version']), nameOf(o));
        const images = read(`${name}.yaml`).flatMap((o) => JSON.stringify(o).match(/"image":"[^"]+"/g) ?? []);
        assert.ok(images.length >= 2);
        for (const image of images) assert.ok(image.endsWith(`:${version}"`), image);
      });

      it('puts the Namespace first and the MutatingWebhookConfiguration last', () => {
        const kinds = read(`${name}.yaml`).map((o) => o.kind);
        assert.equal(kinds[0], 'Namespace');
        assert.equal(kinds.at(-1), 'MutatingWebhookConfiguration');
      });
    });
  }
});

describe('npm run release -- --images FILE (what `npm run images -- --push` wrote)', { skip: KUBECTL_MISSING }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdrelimg-'));
  const version = packageVersion();
  const digest = (c: string): string => `sha256:${c.repeat(64)}`;
  const imagesFile = (overrides: Record<string, unknown> = {}): string => {
    const path = join(dir, `images-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify({
      version, registry: 'registry.example:5000/team', pushed: true, skipped: {},
      images: {
        'conndrain-agent': { repository: 'registry.example:5000/team/conndrain-agent', tag: version, digest: digest('a'), platforms: { 'linux/amd64': digest('1') } },
        'conndrain-webhook': { repository: 'registry.example:5000/team/conndrain-webhook', tag: version, digest: digest('b'), platforms: { 'linux/amd64': digest('2') } },
      },
      ...overrides,
    }));
    return path;
  };
  const release = (out: string, file: string): ReturnType<typeof spawnSync> =>
    spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/release/release.ts'), out, '--no-cli', '--images', file], { cwd: REPO_ROOT, encoding: 'utf8' });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('pins every image of every file to the pushed manifest list, and changes nothing else', () => {
    const out = join(dir, 'pinned');
    const run = release(out, imagesFile());
    assert.equal(run.status, 0, String(run.stderr));
    const expected: Record<string, string> = {
      'ghcr.io/conndrain/conndrain-agent': `registry.example:5000/team/conndrain-agent@${digest('a')}`,
      'ghcr.io/conndrain/conndrain-webhook': `registry.example:5000/team/conndrain-webhook@${digest('b')}`,
    };
    for (const [name, kustomization] of RELEASE_OVERLAYS) {
      const text = readFileSync(join(out, `${name}.yaml`), 'utf8');
      assert.match(text, /^# Images pinned to what `npm run images -- --push` pushed: /m);
      const objects = parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => o !== null);
      const images = objects.flatMap((o) => [...JSON.stringify(o).matchAll(/"image":"([^"]+)"/g)].map((m) => m[1] ?? ''));
      assert.ok(images.length >= 2, name);
      for (const image of images) assert.ok(Object.values(expected).includes(image), `${name}: ${image}`);
      // Otherwise exactly kubectl kustomize's objects: put the tags back and compare.
      const unpinned = JSON.parse(JSON.stringify(objects).replace(/"image":"([^"]+)@sha256:[0-9a-f]{64}"/g, (_m, repo: string) =>
        `"image":"${Object.entries(expected).find(([, ref]) => ref.startsWith(`${repo}@`))?.[0] ?? repo}:${version}"`)) as KubeObject[];
      assert.deepEqual(unpinned, render(kustomization).filter((o) => o.kind !== 'CustomResourceDefinition'), name);
    }
  });

  it('refuses a file that was not pushed, or is of another version, and writes nothing', () => {
    for (const [overrides, message] of [[{ pushed: false }, /not pushed/], [{ version: '0.0.1' }, /is for version 0\.0\.1/]] as const) {
      const out = join(dir, `refused-${String(message)}`.replace(/[^a-z0-9-]/gi, ''));
      const run = release(out, imagesFile(overrides));
      assert.equal(run.status, 1);
      assert.match(String(run.stderr), message);
      assert.throws(() => readdirSync(out));
    }
  });
});
