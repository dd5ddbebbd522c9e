/**
 * A real container registry on loopback for the image tests: Debian's `docker-registry` (the
 * CNCF distribution registry) with a throw-away config and storage, plain HTTP on
 * 127.0.0.1:<free port> (so buildah and skopeo talk to it with --tls-verify=false). Test-only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why the registry tests cannot run here, or undefined. */
export function registryToolsProblem(): string | undefined {
  for (const [tool, args] of [['docker-registry', ['--version']], ['skopeo', ['--version']]] as const) {
    if (spawnSync(tool, args, { stdio: 'ignore' }).error !== undefined) return `${tool} not found (scripts/install-deps.sh installs it)`;
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function v2Status(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/v2/', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export class LoopbackRegistry {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'cdreg-'));
  readonly log: string[] = [];
  /** host:port, the registry part of image names. */
  address = '';

  async start(): Promise<void> {
    const port = await freePort();
    const config = join(this.dir, 'config.yml');
    writeFileSync(config, [
      'version: 0.1',
      'log: { level: warn }',
      `storage: { filesystem: { rootdirectory: ${join(this.dir, 'data')} }, delete: { enabled: true } }`,
      `http: { addr: 127.0.0.1:${port} }`,
      '',
    ].join('\n'));
    this.child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout, this.child.stderr]) stream?.on('data', (d: Buffer) => this.log.push(d.toString()));
    const deadline = Date.now() + 30_000;
    while ((await v2Status(port)) !== 200) {
      if (this.child.exitCode !== null || Date.now() > deadline) throw new Error(`docker-registry did not start on 127.0.0.1:${port}\n${this.log.join('')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    this.address = `127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    if (this.child !== undefined && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child?.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
