import type { Writable } from 'node:stream';

/**
 * Resolves once everything written to `stream` so far has been handed to the kernel (or the
 * stream failed: a reader that went away). process.stdout and process.stderr are asynchronous
 * when they are pipes, so `process.exit()` right after a large write drops what the reader
 * has not taken yet; the entry point waits for this first.
 */
export function flushed(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) {
      resolve();
      return;
    }
    // Write callbacks run in order: this one runs once every earlier write is out (or failed).
    stream.once('error', () => resolve());
    stream.write('', () => resolve());
  });
}

/** Ends the process with `code` once stdout and stderr have been written out. */
export async function exitAfterOutput(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
