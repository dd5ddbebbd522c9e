import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Builds the process logger. Called by entry points only (never at import time), so tests
 * and the CLI choose level and destination. Every line is JSON; callers add the request or
 * pod with `logger.child({...})`.
 */
export function createLogger(options: { level: string; component: string; destination?: DestinationStream }): Logger {
  const base = { component: options.component };
  const settings = { level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}

/** Bytes gathered before one write, and the longest a line waits for it. */
export const LOG_BATCH_BYTES = 4096;
export const LOG_BATCH_MS = 1000;

/**
 * A destination for a server that logs a line per request (the webhook): lines are gathered
 * up to LOG_BATCH_BYTES and written by one asynchronous write, at the latest LOG_BATCH_MS
 * after they were logged. pino's default destination writes every line on its own through
 * libuv's thread pool (a hand-off to a worker thread and back per line), which cost the
 * webhook more CPU per request than formatting the line (bench/webhook). The write stays
 * asynchronous, so a slow log reader never stalls admission. On exit pino flushes what is
 * gathered; a process killed outright (SIGKILL, OOM) loses at most the last second of lines.
 * Call `logger.flush()` after a line someone waits for (the server's "listening").
 */
export function batchedDestination(dest: string | number = 1): DestinationStream {
  return pino.destination({ dest, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_BATCH_MS });
}

export type { Logger };
