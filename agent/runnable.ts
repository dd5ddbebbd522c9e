/**
 * The agent's parts as runnables (the shape of controller-runtime's manager): each capability
 * is an object with an async start() and stop(); `Runnables` starts them in a fixed order,
 * stops them in the reverse order, and when one fails to start stops those already started.
 */
import type { Logger } from 'pino';

export interface Runnable {
  /** For logs: which part (events, state, handover, health, conntrack, ipvs, drain, pods, plan). */
  readonly name: string;
  start(): Promise<void>;
  /** Safe to call once whether or not start() ran. */
  stop(): Promise<void>;
}

/** A runnable's start() failed: which one, and why (`cause`, the original error). */
export class RunnableStartError extends Error {
  constructor(readonly runnable: string, cause: unknown) {
    super(`${runnable}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RunnableStartError';
  }
}

/** A list of runnables started in order and stopped in reverse. */
export class Runnables {
  private readonly started: Runnable[] = [];

  constructor(
    private readonly all: readonly Runnable[],
    private readonly log: Logger,
  ) {}

  /** Starts each in order; on a failure, stops those started (reverse order) and throws a RunnableStartError. */
  async start(): Promise<void> {
    for (const r of this.all) {
      try {
        await r.start();
      } catch (error) {
        this.log.error({ err: error, runnable: r.name }, `agent: ${r.name} failed to start; stopping what started`);
        await this.stop();
        throw new RunnableStartError(r.name, error);
      }
      this.started.push(r);
    }
  }

  /** Stops what started, last started first (a failing stop is logged; the others still stop). */
  async stop(): Promise<void> {
    while (this.started.length > 0) {
      const r = this.started.pop();
      if (r === undefined) break;
      try {
        await r.stop();
      } catch (error) {
        this.log.warn({ err: error, runnable: r.name }, `agent: ${r.name} failed to stop cleanly`);
      }
    }
  }
}
