/**
 * The image tests' tools: buildah builds images/*.Dockerfile from the repository (the real
 * builder, not a replay), on a base made offline (offline-base.sh: no registry is reachable
 * here), and runs them without an OCI runtime (`buildah run --isolation chroot`: runc and
 * crun cannot set rlimits on these sandboxed machines). Test-only: the production code never
 * shells out.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO = new URL('../..', import.meta.url).pathname;

/** Why the image tests cannot run here, or undefined when they can. */
export function imageToolsProblem(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (buildah, network namespaces)';
  for (const tool of ['buildah', 'mmdebstrap', 'ip']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).error !== undefined) return `${tool} not found (scripts/install-deps.sh installs it)`;
  }
  return undefined;
}

function run(cmd: string, args: string[], timeoutMs: number): string {
  return execFileSync(cmd, args, { cwd: REPO, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Builds (or finds cached) the offline base image; returns its name. */
export function offlineBase(): string {
  return run('bash', [join(REPO, 'test/images/offline-base.sh')], 30 * 60_000).trim();
}

/** npm's cache directory on this machine, mounted into the build stage so `npm ci` reuses it. */
function npmCache(): string {
  const dir = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `buildah bud` of images/<name>.Dockerfile with BASE (and RUNTIME) = base; cached layers reused. */
export function buildImage(name: 'agent' | 'webhook', base: string): string {
  const tag = `localhost/conndrain-${name}:test`;
  run('buildah', [
    'bud', '--isolation', 'chroot', '--layers', '--quiet',
    '--volume', `${npmCache()}:/root/.npm`,
    '--build-arg', `BASE=${base}`, '--build-arg', `RUNTIME=${base}`,
    '-f', `images/${name}.Dockerfile`, '-t', tag, '.',
  ], 40 * 60_000);
  return tag;
}

export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  user: string;
  exposedPorts: string[];
  sizeBytes: number;
}

export function inspectImage(tag: string): ImageConfig {
  const raw = JSON.parse(run('buildah', ['inspect', '--type', 'image', tag], 60_000)) as {
    OCIv1: { config: { Entrypoint?: string[]; Cmd?: string[]; User?: string; ExposedPorts?: Record<string, unknown> } };
  };
  const size = Number(run('podman', ['image', 'inspect', '--format', '{{.Size}}', tag], 60_000).trim());
  const c = raw.OCIv1.config;
  return { entrypoint: c.Entrypoint ?? [], cmd: c.Cmd ?? [], user: c.User ?? '', exposedPorts: Object.keys(c.ExposedPorts ?? {}), sizeBytes: size };
}

/** A working container of the image: its root filesystem is readable at `root`. */
export class Container {
  readonly id: string;
  readonly root: string;

  constructor(image: string) {
    this.id = run('buildah', ['from', '--quiet', image], 120_000).trim();
    this.root = run('buildah', ['mount', this.id], 60_000).trim();
  }

  remove(): void {
    spawnSync('buildah', ['rm', this.id], { stdio: 'ignore' });
  }
}

/** Capabilities buildah's chroot isolation grants by default (buildah 1.28: `--cap-drop all` also drops what --cap-add adds). */
const DEFAULT_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'SETFCAP'];

export interface RunOptions {
  /** Run inside this named network namespace (ip netns exec); the host's otherwise. */
  netns?: string;
  /** The only capabilities the process gets (bounding, permitted, effective). */
  caps: string[];
  /** Host directories bound at the same path. */
  volumes: string[];
  /** Arguments after the image ENTRYPOINT. */
  args: string[];
}

/** The image's entrypoint running in a container, its JSON log lines collected. */
export class RunningImage {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;

  constructor(container: Container, entrypoint: string[], options: RunOptions) {
    const caps = [...DEFAULT_CAPS.filter((c) => !options.caps.includes(c)).flatMap((c) => ['--cap-drop', `CAP_${c}`]), ...options.caps.flatMap((c) => ['--cap-add', `CAP_${c}`])];
    const buildahArgs = ['run', '--isolation', 'chroot', '--network', 'host', ...caps, ...options.volumes.flatMap((v) => ['--volume', `${v}:${v}`]), container.id, '--', ...entrypoint, ...options.args];
    const [cmd, args] = options.netns === undefined ? ['buildah', buildahArgs] : ['ip', ['netns', 'exec', options.netns, 'buildah', ...buildahArgs]];
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      try {
        this.lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        this.lines.push({ msg: text });
      }
    });
    createInterface({ input: this.child.stderr! }).on('line', (text) => this.stderr.push(text));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** The last lines, for failure messages. */
  tail(): string {
    return `--- stdout ---\n${this.lines.slice(-20).map((l) => JSON.stringify(l)).join('\n')}\n--- stderr ---\n${this.stderr.slice(-20).join('\n')}`;
  }

  /** Signals the whole process group this test started (buildah and the process in the container). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, signal);
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(() => {
      if (this.child.pid !== undefined) try { process.kill(-this.child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, 30_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}
