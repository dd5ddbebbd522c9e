import type { IncomingMessage } from 'node:http';
import type { BodyBudget } from './body-budget.js';

export type BodyRead =
  | { kind: 'ok'; text: string; held: number }
  | { kind: 'too-large' }
  | { kind: 'busy' }
  | { kind: 'stalled'; afterMs: number; received: number }
  | { kind: 'aborted'; error: Error };

export interface BodyLimits {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Bytes held by all requests together; this body is refused if it would go past it. */
  budget: BodyBudget;
  /** Longest gap between two chunks. */
  idleTimeoutMs: number;
  /** Whole body. */
  timeoutMs: number;
}

/**
 * Reads a request body within bounds: at most `maxBytes`, within the shared budget (taken up
 * front when Content-Length is known, chunk by chunk otherwise), no gap longer than
 * `idleTimeoutMs` and no longer than `timeoutMs` in all. A body that stops arriving destroys
 * the socket (`stalled`): nobody is waiting for an answer. On `ok` the caller gives `held`
 * bytes back to the budget once it has answered; every other result gives them back itself.
 * Never rejects.
 */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<BodyRead> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let done = false;
    const declared = Number(req.headers['content-length']);
    const upFront = Number.isInteger(declared) && declared >= 0;
    if (upFront) {
      if (declared > limits.maxBytes) {
        resolve({ kind: 'too-large' });
        return;
      }
      if (!limits.budget.take(declared)) {
        resolve({ kind: 'busy' });
        return;
      }
      held = declared;
    }
    let idle: NodeJS.Timeout | undefined;
    const finish = (result: BodyRead): void => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      clearTimeout(deadline);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (result.kind !== 'ok') {
        chunks.length = 0;
        limits.budget.give(held);
        held = 0;
        // Drop whatever else arrives until the socket is closed (lingering close or destroy).
        req.resume();
      }
      resolve(result);
    };
    const stall = (): void => {
      finish({ kind: 'stalled', afterMs: Date.now() - started, received: size });
      req.socket.destroy();
    };
    const deadline = setTimeout(stall, limits.timeoutMs);
    const armIdle = (): void => {
      clearTimeout(idle);
      idle = setTimeout(stall, limits.idleTimeoutMs);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.maxBytes) {
        finish({ kind: 'too-large' });
        return;
      }
      if (!upFront) {
        if (!limits.budget.take(chunk.length)) {
          finish({ kind: 'busy' });
          return;
        }
        held += chunk.length;
      }
      chunks.push(chunk);
      armIdle();
    };
    // A review usually arrives as one chunk (one TLS record holds 16 KiB): decode it in place.
    const onEnd = (): void => finish({ kind: 'ok', held, text: (chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, size)).toString('utf8') });
    const onError = (error: Error): void => finish({ kind: 'aborted', error });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    armIdle();
  });
}
