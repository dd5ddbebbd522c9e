/**
 * Test support for the agent's kernel tests: a "node" network namespace with the agent
 * process running in it (spawned through the real CLI), plus relays so the test process
 * (root namespace) and the agent reach each other without touching the host's interfaces:
 * the API stand-in is served on a unix socket and relayed to 127.0.0.1:16443 inside the
 * namespace; the agent's drain and metrics ports are relayed back to unix sockets.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO = new URL('../..', import.meta.url).pathname;
export const API_PORT_IN_NODE = 16443;
export const DRAIN_PORT = 9901;
export const METRICS_PORT = 9902;
/** The agent's default probes port (/healthz, /readyz on 127.0.0.1). */
export const PROBES_PORT = 9903;

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function addNetns(name: string): void {
  sh('ip', ['netns', 'add', name]);
  sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
}

export function deleteNetns(name: string): void {
  try {
    sh('ip', ['netns', 'del', name]);
  } catch {
    // already gone
  }
}

/** Starts test/agent/relay.mjs in `ns`; resolves once it listens. */
export function startRelay(ns: string, listen: string, connect: string): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, join(REPO, 'test/agent/relay.mjs'), listen, connect], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`relay exited ${String(code)}`)));
    child.stdout.once('data', () => resolve(child));
  });
}

export interface LogLine {
  msg?: string;
  level?: number;
  pod?: string;
  [key: string]: unknown;
}

/** The real agent process (`node --import tsx cli/main.ts agent ...`) in a namespace. */
export class AgentProcess {
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  private waiters: Array<{ test: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: text };
      }
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(line)) return true;
        w.resolve(line);
        return false;
      });
    });
    createInterface({ input: child.stderr! }).on('line', (text) => this.stderr.push(text));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * `entry`: what node runs before `agent ...` (default: the TypeScript sources through tsx; a
   * compiled CLI bundle, e.g. `[<outdir>/main.js]`, starts in a fraction of the time under TCG).
   */
  static start(ns: string, args: string[], entry: readonly string[] = ['--import', 'tsx', join(REPO, 'cli/main.ts')]): AgentProcess {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...entry, 'agent', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    return new AgentProcess(child);
  }

  /** Resolves with the first log line (past or future) that passes `test`. */
  waitFor(what: string, test: (l: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> {
    const past = this.lines.find(test);
    if (past !== undefined) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent: timed out waiting for ${what}\n--- stdout ---\n${this.lines.slice(-30).map((l) => JSON.stringify(l)).join('\n')}\n--- stderr ---\n${this.stderr.slice(-30).join('\n')}`)), timeoutMs);
      this.waiters.push({ test, resolve: (l) => { clearTimeout(timer); resolve(l); } });
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** GET over a unix socket (a relayed agent port). */
export function getUnix(socketPath: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000, pollMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
