/**
 * Runs the real CLI (cli/main.ts) with its stdout piped into a second process that reads
 * slowly, the way `conndrain inject -f big.yaml | kubectl apply -f -` runs: the pipe fills,
 * and whatever the CLI has not written when it exits is lost.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Reads stdin with a 20 ms pause after each chunk; at the end, writes back all it received. */
const SLOW_READER = `
const chunks = [];
process.stdin.on('data', (chunk) => {
  chunks.push(chunk);
  process.stdin.pause();
  setTimeout(() => process.stdin.resume(), 20);
});
process.stdin.on('end', () => process.stdout.write(Buffer.concat(chunks)));
`;

export interface PipedRun {
  code: number | null;
  stderr: string;
  /** What the slow reader received. */
  text: string;
  bytes: number;
  sha256: string;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function runCliIntoSlowReader(args: string[], options: { stdin?: string; prefix?: string[] } = {}): Promise<PipedRun> {
  return new Promise((resolve, reject) => {
    const [command, ...rest] = [...(options.prefix ?? []), process.execPath, '--import', 'tsx', 'cli/main.ts', ...args];
    const cli = spawn(command as string, rest, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const reader = spawn(process.execPath, ['-e', SLOW_READER], { stdio: [cli.stdout, 'pipe', 'inherit'] });
    let stderr = '';
    const received: Buffer[] = [];
    cli.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    reader.stdout.on('data', (c: Buffer) => received.push(c));
    cli.on('error', reject);
    reader.on('error', reject);
    // The reader has its own copy of the pipe: drop the parent's, or it stays open for good.
    cli.stdout.destroy();
    const cliDone = new Promise<number | null>((r) => cli.on('close', (code) => r(code)));
    const readerDone = new Promise<void>((r) => reader.on('close', () => r()));
    cli.stdin.end(options.stdin ?? '');
    void Promise.all([cliDone, readerDone]).then(([code]) => {
      const all = Buffer.concat(received);
      resolve({ code, stderr, text: all.toString('utf8'), bytes: all.length, sha256: createHash('sha256').update(all).digest('hex') });
    });
  });
}
