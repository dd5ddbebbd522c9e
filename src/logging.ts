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

export type { Logger };
