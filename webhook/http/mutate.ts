import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log/logger.js';
import { fail, type Result } from '../../src/result.js';
import type { AdmissionHandler } from '../admission/handler.js';
import type { WebhookMetrics } from '../metrics.js';
import type { AdmissionSummary } from './admission-summary.js';
import { bounded, logReply, requestFields, tallyOf } from './admission-log.js';
import { admitReview, type Admitted } from './admit.js';
import type { BodyBudget } from './body-budget.js';
import { readBody } from './body.js';
import { busy, checkRequestHead, MAX_BODY_BYTES, tooLarge, type Rejection } from './hygiene.js';
import type { ConnectionLimits } from './limits.js';
import { lingerOnClose } from './lingering-close.js';
import { encodeReview } from './review.js';
import { statusBody } from './status.js';

export interface MutateDeps {
  /** What the webhook decides; this layer only reads the body, asks it and writes the answer. */
  handler: AdmissionHandler;
  logger: Logger;
  metrics: WebhookMetrics;
  limits: ConnectionLimits;
  budget: BodyBudget;
  summary: AdmissionSummary;
  /** True once shutdown stopped accepting: answers then carry `Connection: close`. */
  closing: () => boolean;
}

/** The HTTP layer itself failed (a bug, caught) before it had an answer to send. */
const FAILED: Rejection = { status: 500, code: 'internal-error', message: 'conndrain webhook internal error' };

/**
 * Writes the reply, encoded here and only here: an AdmissionReview (200) for an answer, a
 * Status for a refusal. `bodyUnread`: the request body was not (or not all) read, so the
 * connection closes after the reply, in stages (lingerOnClose) so that a client still
 * uploading reads it.
 */
function send(res: ServerResponse, reply: Result<Admitted, Rejection>, closeAfter: boolean, bodyUnread: boolean, lingerMs: number): void {
  const status = reply.ok ? 200 : reply.error.status;
  // A string, not a Buffer: node then writes head and body as one chunk (no cork and writev).
  const payload = JSON.stringify(reply.ok ? encodeReview(reply.value.answer) : statusBody(reply.error.status, reply.error.code, reply.error.message));
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) };
  if (!reply.ok && reply.error.code === 'method-not-allowed') headers['Allow'] = 'POST';
  if (!reply.ok && reply.error.code === 'busy') headers['Retry-After'] = 1;
  if (closeAfter || bodyUnread) headers['Connection'] = 'close';
  if (bodyUnread) lingerOnClose(res.socket ?? res.req.socket, lingerMs);
  res.writeHead(status, headers);
  res.end(payload);
}

/**
 * `POST /mutate`: request hygiene (hygiene.ts), then the admission handler, then one reply.
 * Never throws or rejects: anything unexpected becomes a 500 Status (before headers) and is
 * logged and counted.
 */
export function createMutateHandler(deps: MutateDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { limits, budget } = deps;
  return async (req, res) => {
    const started = process.hrtime.bigint();
    let reply: Result<Admitted, Rejection>;
    let held = 0;
    try {
      const head = checkRequestHead(req);
      // A body may follow a refused head (405 with a body, 415, 413): it is never read.
      let bodyUnread = head !== undefined;
      if (head !== undefined) {
        reply = fail(head);
      } else {
        const body = await readBody(req, { maxBytes: MAX_BODY_BYTES, budget, idleTimeoutMs: limits.bodyIdleTimeoutMs, timeoutMs: limits.bodyTimeoutMs });
        if (body.kind === 'aborted' || body.kind === 'stalled') {
          const fields = body.kind === 'stalled' ? { afterMs: body.afterMs, received: body.received, declared: bounded(req.headers['content-length']) } : { err: body.error };
          deps.logger.warn({ ...requestFields(undefined), ...fields }, body.kind === 'stalled' ? 'request body stopped arriving; connection closed' : 'client went away while sending the request body');
          deps.metrics.admissions.inc({ result: 'rejected', reason: body.kind });
          deps.summary.add('rejected', body.kind);
          return;
        }
        bodyUnread = body.kind !== 'ok';
        if (body.kind === 'too-large') reply = fail(tooLarge());
        else if (body.kind === 'busy') reply = fail(busy(budget));
        else {
          held = body.held;
          reply = admitReview(body.text, deps.handler);
        }
      }
      send(res, reply, deps.closing(), bodyUnread, limits.lingerMs);
    } catch (error) {
      reply = fail(FAILED);
      deps.logger.error({ ...requestFields(undefined), err: error }, 'unexpected error while answering /mutate');
      if (!res.headersSent) send(res, reply, true, false, limits.lingerMs);
      else res.destroy();
    } finally {
      budget.give(held);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { result, reason } = tallyOf(reply);
    deps.metrics.admissions.inc({ result, reason });
    deps.metrics.admissionDuration.observe({ result }, seconds);
    deps.summary.add(result, reason);
    logReply(deps.logger, reply, Math.round(seconds * 1e6) / 1e3);
  };
}
