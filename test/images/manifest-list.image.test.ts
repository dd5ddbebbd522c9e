/**
 * The two-platform path of `npm run images` (scripts/images), cheaply: the script builds two
 * tiny images (`--context`; `--base` a two-platform list of a static program each, test/images/
 * tiny-elf.ts) for linux/amd64 and linux/arm64 into one manifest list each and pushes them to a
 * registry on loopback; skopeo reads both platforms back from each list, copies each
 * platform's image out of it (`--override-arch`), and each runs: the foreign one through
 * qemu-user-static, as the real images' RUN steps do. Seconds, not the tens of minutes an
 * emulated build of the real images takes (their two-platform run: docs/dev/images.md).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureForeignArch, hostArch } from '../../scripts/images/binfmt.js';
import type { ImagesFile } from '../../scripts/images/images.js';
import { Container, imageToolsProblem, REPO } from './builder.js';
import { LoopbackRegistry, registryToolsProblem } from './registry.js';
import { tinyElf, type TinyElfArch } from './tiny-elf.js';

const host = hostArch();
const ARCHS: TinyElfArch[] = host === 'arm64' ? ['arm64', 'amd64'] : ['amd64', 'arm64'];
const foreign = ARCHS[1] ?? 'arm64';
const skip = imageToolsProblem() ?? registryToolsProblem() ?? (host === 'amd64' || host === 'arm64' ? ensureForeignArch(foreign) : `no tiny program for ${host}`) ?? false;
const NAMES = ['conndrain-agent', 'conndrain-webhook'];
/**
 * The images stand on a base that is itself a manifest list (the real Dockerfiles' bases are:
 * node, distroless), one image per platform holding that platform's program at /hello, so
 * each platform's build starts from another image. From one image for both (FROM scratch),
 * buildah's layer cache, which does not key on the platform, would hand the second platform
 * the first one's layers.
 */
const DOCKERFILE = ['ARG BASE', 'FROM ${BASE}', 'COPY marker /marker', ''].join('\n');
const BASE = `localhost/conndrain-tiny-base-${process.pid}`;
const TLS = '--tls-verify=false';

/** What the tiny program of `arch` prints. */
const greeting = (arch: string): string => `tiny ${arch}`;

describe('npm run images --context: two platforms, one manifest list per image, pushed and pulled back', { skip, timeout: 10 * 60_000 }, () => {
  const registry = new LoopbackRegistry();
  const work = skip === false ? mkdtempSync(join(tmpdir(), 'cdlist-')) : '';
  const cleanups: Array<() => void> = [];
  let file: ImagesFile | undefined;
  let stderr = '';

  before(async () => {
    mkdirSync(join(work, 'context', 'images'), { recursive: true });
    const buildah = (args: string[]): string => execFileSync('buildah', args, { encoding: 'utf8' }).trim();
    for (const arch of ARCHS) {
      const program = join(work, `hello-${arch}`);
      writeFileSync(program, tinyElf(arch, `${greeting(arch)}\n`));
      chmodSync(program, 0o755);
      const container = buildah(['from', '--arch', arch, 'scratch']);
      buildah(['copy', '--quiet', container, program, '/hello']);
      buildah(['config', '--arch', arch, '--os', 'linux', '--entrypoint', '["/hello"]', container]);
      buildah(['commit', '--quiet', '--rm', container, `${BASE}:${arch}`]);
      cleanups.push(() => spawnSync('buildah', ['rmi', `${BASE}:${arch}`], { stdio: 'ignore' }));
    }
    buildah(['manifest', 'create', `${BASE}:list`]);
    cleanups.push(() => spawnSync('buildah', ['manifest', 'rm', `${BASE}:list`], { stdio: 'ignore' }));
    for (const arch of ARCHS) buildah(['manifest', 'add', `${BASE}:list`, `containers-storage:${BASE}:${arch}`]);
    writeFileSync(join(work, 'context', 'marker'), `${process.pid}\n`);
    for (const name of ['agent', 'webhook']) writeFileSync(join(work, 'context', 'images', `${name}.Dockerfile`), DOCKERFILE);
    await registry.start();
    const images = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', join(REPO, 'scripts/images/images.ts'),
      '--context', join(work, 'context'), '--base', `${BASE}:list`, '--registry', registry.address, '--push', TLS, '--strict',
      '--platforms', ARCHS.map((arch) => `linux/${arch}`).join(','), '--out', join(work, 'images.json')],
    { cwd: REPO, encoding: 'utf8', timeout: 8 * 60_000 });
    stderr = images.stderr;
    assert.equal(images.status, 0, `npm run images failed:\n${stderr}`);
    file = JSON.parse(readFileSync(join(work, 'images.json'), 'utf8')) as ImagesFile;
    for (const image of Object.values(file.images)) cleanups.push(() => spawnSync('buildah', ['manifest', 'rm', `${image.repository}:${image.tag}`], { stdio: 'ignore' }));
    // What each platform's build committed (the lists name them): removed after the lists.
    for (const image of Object.values(file.images)) {
      for (const digest of Object.values(image.platforms)) cleanups.unshift(() => spawnSync('buildah', ['rmi', `${image.repository}@${digest}`], { stdio: 'ignore' }));
    }
  }, { timeout: 9 * 60_000 });

  after(async () => {
    for (const cleanup of cleanups.reverse()) cleanup();
    await registry.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('pushes one manifest list per image with both platforms, and records the digests', () => {
    assert.ok(file !== undefined);
    assert.equal(file.pushed, true);
    assert.deepEqual(file.skipped, {});
    assert.deepEqual(Object.keys(file.images).sort(), NAMES);
    for (const [name, image] of Object.entries(file.images)) {
      assert.equal(image.repository, `${registry.address}/${name}`);
      const raw = execFileSync('skopeo', ['inspect', '--raw', TLS, `docker://${image.repository}:${image.tag}`], { encoding: 'utf8' });
      assert.equal(`sha256:${createHash('sha256').update(raw).digest('hex')}`, image.digest, `${name}: the tag serves the list the script pushed`);
      const list = JSON.parse(raw) as { mediaType: string; manifests: Array<{ digest: string; platform: { os: string; architecture: string } }> };
      assert.equal(list.mediaType, 'application/vnd.docker.distribution.manifest.list.v2+json');
      assert.deepEqual(list.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`).sort(), ['linux/amd64', 'linux/arm64']);
      assert.deepEqual(Object.fromEntries(list.manifests.map((m) => [`${m.platform.os}/${m.platform.architecture}`, m.digest])), image.platforms);
    }
  });

  it('refuses a list that does not hold one image per platform (FROM scratch: buildah\'s cache merges the platforms)', () => {
    mkdirSync(join(work, 'scratch', 'images'), { recursive: true });
    writeFileSync(join(work, 'scratch', 'marker'), `${process.pid}\n`);
    for (const name of ['agent', 'webhook']) writeFileSync(join(work, 'scratch', 'images', `${name}.Dockerfile`), 'FROM scratch\nCOPY marker /marker\n');
    const images = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', join(REPO, 'scripts/images/images.ts'),
      '--context', join(work, 'scratch'), '--registry', `${registry.address}/scratch`, TLS, '--strict',
      '--platforms', ARCHS.map((arch) => `linux/${arch}`).join(','), '--out', join(work, 'scratch.json')],
    { cwd: REPO, encoding: 'utf8', timeout: 8 * 60_000 });
    for (const name of NAMES) spawnSync('buildah', ['manifest', 'rm', `${registry.address}/scratch/${name}:${file?.version ?? ''}`], { stdio: 'ignore' });
    assert.equal(images.status, 1, images.stderr);
    assert.match(images.stderr, new RegExp(`the manifest list holds 1 image\\(s\\) for ${foreign}, not one for each of ${ARCHS.join(', ')}`));
  });

  it('pulls each platform\'s image back (skopeo copy --override-arch) and runs it, the foreign one under qemu-user', (t) => {
    assert.ok(file !== undefined);
    for (const [name, image] of Object.entries(file.images)) {
      for (const arch of ARCHS) {
        const tag = `localhost/${name}-manifest-list-test:${arch}`;
        execFileSync('skopeo', ['copy', '--quiet', '--override-arch', arch, `--src-tls-verify=false`, `docker://${image.repository}@${image.digest ?? ''}`, `containers-storage:${tag}`]);
        cleanups.push(() => spawnSync('buildah', ['rmi', tag], { stdio: 'ignore' }));
        assert.equal(execFileSync('buildah', ['inspect', '--type', 'image', '--format', '{{.OCIv1.Architecture}}', tag], { encoding: 'utf8' }).trim(), arch);
        const container = new Container(tag);
        cleanups.push(() => container.remove());
        const out = execFileSync('buildah', ['run', '--isolation', 'chroot', container.id, '--', '/hello'], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(out.trim(), greeting(arch), `${name} ${arch}`);
        t.diagnostic(`${name} linux/${arch}${arch === host ? '' : ' (qemu-user)'}: ${out.trim()}`);
      }
    }
  });
});
