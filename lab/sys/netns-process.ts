import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (lab scripts are started from there so `--import tsx` resolves). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let bundleDir: string | undefined;

/**
 * Runs lab scripts from plain-JS bundles in `dir` (`<name>.mjs`, made by bundle-scripts.ts)
 * instead of through tsx: in the TCG guest a process started through tsx takes several times as
 * long to start as plain node (figures: docs/benchmarks.md, lab).
 */
export function useScriptBundles(dir: string | undefined): void {
  bundleDir = dir;
}

/** A long-running process inside a network namespace, with its stdout read as JSON lines. */
export class NetnsProcess {
  readonly lines: unknown[] = [];
  private readonly child: ChildProcess;
  private stderr = '';
  private readonly exited: Promise<number | null>;
  private readonly listeners = new Set<(line: unknown) => void>();

  private constructor(readonly label: string, child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin!.on('error', () => undefined);
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: unknown = text;
      try {
        line = JSON.parse(text) as unknown;
      } catch {
        // non-JSON output is kept as text (a log line, a message)
      }
      this.lines.push(line);
      for (const listener of this.listeners) listener(line);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8192);
    });
  }

  /** Starts `node --import tsx <script> ...args` inside `netns` (or any command with `command`). */
  static startScript(label: string, netns: string, script: string, args: readonly string[]): NetnsProcess {
    if (bundleDir !== undefined) {
      const bundle = join(bundleDir, `${basename(script, '.ts')}.mjs`);
      if (existsSync(bundle)) return NetnsProcess.start(label, netns, process.execPath, [bundle, ...args]);
    }
    return NetnsProcess.start(label, netns, process.execPath, ['--import', 'tsx', fileURLToPath(new URL(script, import.meta.url)), ...args]);
  }

  static start(label: string, netns: string, file: string, args: readonly string[]): NetnsProcess {
    const child = spawn('ip', ['netns', 'exec', netns, file, ...args], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    return new NetnsProcess(label, child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get recentStderr(): string {
    return this.stderr;
  }

  /** Waits for the first line matching `predicate`; rejects on timeout or when the process exits first. */
  waitFor(predicate: (line: unknown) => boolean, timeoutMs: number, what: string): Promise<unknown> {
    const seen = this.lines.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = (error: Error | undefined, line?: unknown) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        if (error === undefined) resolve(line);
        else reject(error);
      };
      const listener = (line: unknown) => {
        if (predicate(line)) done(undefined, line);
      };
      const timer = setTimeout(() => done(new Error(`${this.label}: no ${what} within ${timeoutMs} ms; stderr: ${this.stderr.trim().slice(-2000)}`)), timeoutMs);
      this.listeners.add(listener);
      void this.exited.then((code) => done(new Error(`${this.label} exited (${code}) before ${what}; stderr: ${this.stderr.trim().slice(-2000)}`)));
    });
  }

  onLine(listener: (line: unknown) => void): void {
    this.listeners.add(listener);
  }

  /**
   * Closes stdin (the lab scripts exit on that; `first: 'SIGTERM'` for servers such as the
   * agent), then SIGTERM, then SIGKILL. Never throws.
   */
  async stop(graceMs = 2000, first: 'stdin' | 'SIGTERM' = 'stdin'): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.stdin?.end();
    const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
    if (first === 'stdin' && (await Promise.race([this.exited, timeout(graceMs)])) !== 'timeout') return this.child.exitCode;
    this.child.kill('SIGTERM');
    if ((await Promise.race([this.exited, timeout(graceMs)])) !== 'timeout') return this.child.exitCode;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Sends a signal (SIGTERM to an agent, SIGKILL to simulate a crash). */
  signal(name: NodeJS.Signals): void {
    this.child.kill(name);
  }

  /** Writes one line to the process's stdin (commands for control processes). */
  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }
}
