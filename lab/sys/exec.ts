import { execFile, spawn } from 'node:child_process';

/** A setup command that failed: the command line, its exit code and what it wrote to stderr. */
export class CommandError extends Error {
  readonly command: string;
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(command: string, exitCode: number | null, stderr: string) {
    super(`${command} failed (${exitCode ?? 'signal'}): ${stderr.trim()}`);
    this.name = 'CommandError';
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/**
 * Runs one setup command (`ip`, `nft`, `sysctl`) without a shell; `input` goes to its stdin.
 * Resolves with stdout; rejects with a CommandError carrying stderr.
 */
export function run(file: string, args: readonly string[], input?: string): Promise<string> {
  const line = [file, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new CommandError(line, typeof error.code === 'number' ? error.code : null, stderr || error.message));
    });
    child.stdin?.on('error', () => undefined); // the command may exit before reading its stdin
    child.stdin?.end(input ?? '');
  });
}

/** Like `run` but resolves false instead of rejecting (teardown paths, probes). */
export async function tryRun(file: string, args: readonly string[], input?: string): Promise<boolean> {
  try {
    await run(file, args, input);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command inside a network namespace (`ip netns exec`). */
export function runIn(netns: string, file: string, args: readonly string[], input?: string): Promise<string> {
  return run('ip', ['netns', 'exec', netns, file, ...args], input);
}

/** True when a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export { spawn };
