/**
 * `npm run images -- --registry REGISTRY [--push] [--platforms linux/amd64,linux/arm64]
 *   [--base IMAGE | --offline-base] [--tls-verify=false] [--out FILE] [--strict] [--context DIR]`
 *
 * Builds both images (images/agent.Dockerfile, images/webhook.Dockerfile) with buildah, one
 * build per platform, into one manifest list per image named REGISTRY/conndrain-<name>:<version>
 * (version: package.json), and with --push pushes each list with all its images
 * (`buildah manifest push --all`). Writes --out (default dist/images/conndrain-<version>.json):
 * per image the repository, the tag, and after a push the manifest list's digest and each
 * platform's; `npm run release -- --images FILE` renders the install files with those digests
 * (`image@sha256:...`).
 *
 * Platforms other than this machine's run their RUN steps (npm ci, the netlink-native addon's
 * node-gyp compile, the TypeScript build) through qemu-user-static, registered in binfmt_misc
 * here when it can be (binfmt.ts). When it cannot, the platform is skipped with the reason,
 * printed and recorded in --out ("skipped"), and the list holds the others; --strict makes a
 * skipped platform an error.
 *
 * --context DIR builds from another directory (its images/<name>.Dockerfile, DIR the build
 * context) instead of this repository: the image test of the manifest list path builds two
 * tiny images that way, both platforms in about a minute.
 *
 * Bases: by default the Dockerfiles' own (node:24-bookworm-slim, distroless nodejs24: both
 * multi-arch, pulled for each platform). --base IMAGE replaces BASE (build stage and agent
 * runtime). --offline-base, for machines that reach no container registry (this project's
 * test machines): the test bases test/images/offline-base.sh (this machine's architecture)
 * and offline-base-foreign.sh (others) make from the Debian mirror, used as BASE and RUNTIME.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureForeignArch, hostArch } from './binfmt.js';

const REPO = new URL('../../', import.meta.url).pathname;
export const IMAGE_NAMES = ['agent', 'webhook'] as const;

export interface ImagesFile {
  version: string;
  registry: string;
  pushed: boolean;
  /** Platforms left out, and why. */
  skipped: Record<string, string>;
  images: Record<string, { repository: string; tag: string; digest?: string; platforms: Record<string, string> }>;
}

const log = (message: string): void => {
  process.stderr.write(`images: ${message}\n`);
};

function version(): string {
  return (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Runs a command with its output on our stderr; throws on failure. Returns seconds taken. */
function step(cmd: string, args: string[]): number {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: REPO, stdio: ['ignore', process.stderr, process.stderr] });
  if (r.error !== undefined) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit status ${String(r.status ?? r.signal)}`);
  return (Date.now() - started) / 1000;
}

function capture(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

function npmCache(): string | undefined {
  try {
    const dir = capture('npm', ['config', 'get', 'cache']);
    mkdirSync(dir, { recursive: true });
    return dir;
  } catch {
    return undefined;
  }
}

/** The offline test base of `arch` (built or found cached); its image name. */
function offlineBase(arch: string): string {
  return arch === hostArch()
    ? capture('bash', [join(REPO, 'test/images/offline-base.sh')])
    : capture('bash', [join(REPO, 'test/images/offline-base-foreign.sh'), arch]);
}

/**
 * Throws unless the local list holds one image per platform built. buildah's layer cache does
 * not key on the platform: platforms whose builds start from the same image (FROM scratch)
 * share their layers, and the list ends up with one image under the last platform's name.
 */
function checkListPlatforms(list: string, archs: readonly string[]): void {
  const manifests = (JSON.parse(capture('buildah', ['manifest', 'inspect', list])) as { manifests?: Array<{ digest: string; platform?: { architecture?: string } }> }).manifests ?? [];
  const held = manifests.map((m) => m.platform?.architecture ?? '?').sort();
  const digests = new Set(manifests.map((m) => m.digest));
  if (held.join(',') !== [...archs].sort().join(',') || digests.size !== archs.length) {
    throw new Error(`${list}: the manifest list holds ${digests.size} image(s) for ${held.join(', ') || 'no platform'}, not one for each of ${archs.join(', ')}; buildah's layer cache does not tell platforms apart, so each platform's build must start from its own base image (a multi-platform --base, or the default bases; not FROM scratch)`);
  }
}

function main(): number {
  const { values } = parseArgs({
    options: {
      registry: { type: 'string' },
      push: { type: 'boolean', default: false },
      platforms: { type: 'string', default: 'linux/amd64,linux/arm64' },
      base: { type: 'string' },
      'offline-base': { type: 'boolean', default: false },
      'tls-verify': { type: 'string', default: 'true' },
      out: { type: 'string' },
      strict: { type: 'boolean', default: false },
      context: { type: 'string' },
    },
  });
  const registry = values.registry?.replace(/\/+$/, '');
  if (registry === undefined || registry === '') {
    log('--registry REGISTRY is required (e.g. registry.example.com/conndrain, 127.0.0.1:5000)');
    return 2;
  }
  if (values.base !== undefined && values['offline-base']) {
    log('--base and --offline-base exclude each other');
    return 2;
  }
  const v = version();
  // Relative to the repository by default: the image tests' own builds (test/images/builder.ts)
  // run the same invocation there, so their layers are reused.
  const context = values.context === undefined ? '.' : resolve(values.context);
  const out = resolve(values.out ?? join(REPO, 'dist', 'images', `conndrain-${v}.json`));
  const tlsVerify = `--tls-verify=${values['tls-verify'] === 'false' ? 'false' : 'true'}`;
  const platforms = values.platforms.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const skipped: Record<string, string> = {};
  const archs: string[] = [];
  for (const platform of platforms) {
    const [os, arch, variant] = platform.split('/');
    if (os !== 'linux' || arch === undefined || variant !== undefined) {
      log(`unsupported platform ${platform} (linux/<arch>)`);
      return 2;
    }
    const problem = ensureForeignArch(arch);
    if (problem === undefined) archs.push(arch);
    else {
      skipped[platform] = problem;
      log(`SKIPPING ${platform}: ${problem}`);
    }
  }
  if (archs.length === 0 || (values.strict && Object.keys(skipped).length > 0)) {
    log('not building: platforms were skipped (above)');
    return 1;
  }
  const cache = npmCache();
  const result: ImagesFile = { version: v, registry, pushed: false, skipped, images: {} };
  for (const arch of archs) {
    const base = values['offline-base'] ? offlineBase(arch) : values.base;
    if (values['offline-base']) log(`linux/${arch}: offline base ${String(base)}`);
    for (const name of IMAGE_NAMES) {
      const repository = `${registry}/conndrain-${name}`;
      const list = `${repository}:${v}`;
      if (arch === archs[0]) {
        // A fresh list each run: `--manifest` adds to an existing one.
        spawnSync('buildah', ['manifest', 'rm', list], { stdio: 'ignore' });
        result.images[`conndrain-${name}`] = { repository, tag: v, platforms: {} };
      }
      const args = ['bud', '--isolation', 'chroot', '--layers', '--quiet'];
      // This machine's architecture: no --platform, the same invocation as the image tests
      // (test/images/builder.ts), so a build either of them did is reused from the layer cache.
      if (arch !== hostArch()) args.push('--platform', `linux/${arch}`);
      if (cache !== undefined) args.push('--volume', `${cache}:/root/.npm`);
      if (base !== undefined) {
        args.push('--build-arg', `BASE=${base}`);
        if (values['offline-base']) args.push('--build-arg', `RUNTIME=${base}`);
      }
      args.push('--manifest', list, '-f', join(context, 'images', `${name}.Dockerfile`), context);
      log(`linux/${arch} ${name}: building (buildah bud${arch === hostArch() ? '' : ', RUN steps through qemu-user'})`);
      const seconds = step('buildah', args);
      log(`linux/${arch} ${name}: built in ${seconds.toFixed(0)} s`);
    }
  }
  for (const image of Object.values(result.images)) checkListPlatforms(`${image.repository}:${image.tag}`, archs);
  if (values.push) {
    const tmp = mkdtempSync(join(tmpdir(), 'cdimages-'));
    try {
      for (const [key, image] of Object.entries(result.images)) {
        const list = `${image.repository}:${image.tag}`;
        const digestFile = join(tmp, `${key}.digest`);
        const seconds = step('buildah', ['manifest', 'push', '--all', '--quiet', '--format', 'v2s2', tlsVerify, '--digestfile', digestFile, list, `docker://${list}`]);
        image.digest = readFileSync(digestFile, 'utf8').trim();
        // What the registry now serves under that digest: the list's per-platform manifests.
        const raw = JSON.parse(capture('skopeo', ['inspect', '--raw', tlsVerify, `docker://${image.repository}@${image.digest}`])) as { manifests?: Array<{ digest: string; platform?: { os: string; architecture: string } }> };
        for (const m of raw.manifests ?? []) image.platforms[`${m.platform?.os ?? '?'}/${m.platform?.architecture ?? '?'}`] = m.digest;
        log(`pushed ${image.repository}@${image.digest} (${Object.keys(image.platforms).join(', ')}) in ${seconds.toFixed(0)} s`);
      }
      result.pushed = true;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  } else {
    log('built, not pushed (--push pushes; only pushed images have digests for `npm run release -- --images`)');
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${out}\n`);
  return 0;
}

try {
  process.exitCode = main();
} catch (error) {
  log((error as Error).message);
  process.exitCode = 1;
}
