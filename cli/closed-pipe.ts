/**
 * A reader that goes away (`conndrain --help | head -1`) makes the next write to stdout fail
 * with EPIPE. Node ignores SIGPIPE, so without a listener that error is thrown from the stream
 * and the CLI dies with a stack trace on stderr. Nobody is left to read the rest: stop writing
 * to that stream and let the command finish with its own exit status, as a shell tool killed by
 * SIGPIPE would stay silent. Any other stream error is reported in one line.
 */
import type { Writable } from 'node:stream';

function tolerate(stream: Writable, name: string): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    if (stream !== process.stderr && process.stderr.writable) {
      process.stderr.write(`conndrain: cannot write to ${name}: ${error.message}\n`);
    }
  });
}

/** Installs the listeners on stdout and stderr; called first by each entry point. */
export function tolerateClosedReaders(): void {
  tolerate(process.stdout, 'stdout');
  tolerate(process.stderr, 'stderr');
}
