/**
 * The agent's parts as runnables (the shape of controller-runtime's manager): each capability
 * is an object with an async start() and stop(); `Runnables` starts them in a fixed order,
 * stops them in the reverse order, and when one fails to start stops those already started.
 * A part that fails after it started reports it on the one error channel (the `failed`
 * callback its start() gets): the first report settles `failed`, and its owner (the Agent)
 * turns not ready and stops every part.
 */
import type { Logger } from 'pino';

/** How a started part says it cannot go on: the error, reported once on the agent's one channel. */
export type FailureReport = (error: unknown) => void;

export interface Runnable {
  /** For logs: which part (events, state, handover, health, conntrack, ipvs, drain, pods, plan). */
  readonly name: string;
  /** `failed`: for a failure after start the part cannot recover from (a retried one is only logged). */
  start(failed: FailureReport): Promise<void>;
  /** Safe to call once whether or not start() ran. */
  stop(): Promise<void>;
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** A runnable's start() failed: which one, and why (`cause`, the original error). */
export class RunnableStartError extends Error {
  constructor(readonly runnable: string, cause: unknown) {
    super(`${runnable}: ${messageOf(cause)}`, { cause });
    this.name = 'RunnableStartError';
  }
}

/** A runnable failed after it started: which one, and why (`cause`, the original error). */
export class RunnableFailedError extends Error {
  constructor(readonly runnable: string, cause: unknown) {
    super(`${runnable} failed: ${messageOf(cause)}`, { cause });
    this.name = 'RunnableFailedError';
  }
}

/** A list of runnables started in order and stopped in reverse, with one error channel. */
export class Runnables {
  /** Settles with the first failure a part reported (never rejects). */
  readonly failed: Promise<RunnableFailedError>;
  private readonly started: Runnable[] = [];
  private firstFailure: RunnableFailedError | undefined;
  private settle: (failure: RunnableFailedError) => void = () => undefined;
  private stopping = false;

  constructor(
    private readonly all: readonly Runnable[],
    private readonly log: Logger,
  ) {
    this.failed = new Promise((resolve) => (this.settle = resolve));
  }

  /** The first failure a part reported, if any. */
  get failure(): RunnableFailedError | undefined {
    return this.firstFailure;
  }

  /**
   * Starts each in order; on a failure (a start that throws, or a report from a part already
   * started), stops those started (reverse order) and throws a RunnableStartError.
   */
  async start(): Promise<void> {
    for (const r of this.all) {
      try {
        await r.start((error) => this.report(r.name, error));
      } catch (error) {
        this.log.error({ err: error, runnable: r.name }, `agent: ${r.name} failed to start; stopping what started`);
        await this.stop();
        throw new RunnableStartError(r.name, error);
      }
      this.started.push(r);
      const failure = this.firstFailure;
      if (failure !== undefined) {
        await this.stop();
        throw new RunnableStartError(failure.runnable, failure.cause);
      }
    }
  }

  /** Stops what started, last started first (a failing stop is logged; the others still stop). */
  async stop(): Promise<void> {
    this.stopping = true;
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

  /** The one error channel: the first report settles `failed`; one while stopping, or a later one, is only logged. */
  private report(runnable: string, error: unknown): void {
    if (this.stopping || this.firstFailure !== undefined) {
      this.log.warn({ err: error, runnable }, `agent: ${runnable} failed while the agent stops`);
      return;
    }
    const failure = this.firstFailure = new RunnableFailedError(runnable, error);
    this.log.error({ err: error, runnable }, `agent: ${runnable} failed; the agent is not ready and stops`);
    this.settle(failure);
  }
}
