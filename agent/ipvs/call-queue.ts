/**
 * One queue for the hold's IPVS calls: each batch runs after the one before it settled, so a
 * release never interleaves with a pass.
 */
export class CallQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every batch queued before it; its failure is its caller's, not the queue's. */
  run<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once the batches queued so far are done. */
  async idle(): Promise<void> {
    await this.run(() => Promise.resolve());
  }
}
