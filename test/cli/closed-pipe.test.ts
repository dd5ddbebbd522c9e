/**
 * `conndrain --help | head -1`: the reader closes the pipe after one line. The CLI must end
 * quietly with its own status (0), not with an unhandled EPIPE stack trace on stderr.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url).pathname;

interface ClosedRun { code: number | null; stderr: string; firstLine: string }

/** Runs the CLI and closes its stdout after the first chunk, as `head -1` does. */
function runIntoClosingReader(args: string[]): Promise<ClosedRun> {
  return new Promise((resolve, reject) => {
    const cli = spawn(process.execPath, ['--import', 'tsx', '--conditions=conndrain-source', 'cli/main.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let firstLine = '';
    cli.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    cli.stdout.once('data', (chunk: Buffer) => {
      firstLine = chunk.toString('utf8').split('\n')[0] ?? '';
      cli.stdout.destroy();
    });
    cli.on('error', reject);
    cli.on('close', (code) => resolve({ code, stderr, firstLine }));
  });
}

/** Output long enough that the CLI is still writing when the reader goes away. */
test('help into a reader that closes after the first line: exit 0, nothing on stderr', async () => {
  for (let round = 0; round < 5; round++) {
    const run = await runIntoClosingReader(['conntrack', '--help']);
    assert.match(run.firstLine, /Usage/);
    assert.equal(run.stderr, '', `round ${round}: no EPIPE trace`);
    assert.equal(run.code, 0);
  }
});
