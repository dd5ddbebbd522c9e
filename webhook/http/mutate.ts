import type { IncomingMessage, ServerResponse } from 'node:http';
import { displayName } from '../../src/inject/index.js';
import type { Logger } from '../../log/logger.js';
import { quoteValue } from '../../src/quote.js';
import { answerReview, failed, refused, type Answer } from '../admission/answer.js';
import type { AdmissionHandler } from '../admission/handler.js';
import { checkRequestHead, MAX_BODY_BYTES, tooLarge, type Rejection } from '../admission/hygiene.js';
import type { AdmissionRequest } from '../admission/types.js';
import type { WebhookMetrics } from '../metrics.js';
import type { AdmissionSummary } from './admission-summary.js';
import type { BodyBudget } from './body-budget.js';
import { readBody } from './body.js';
import type { ConnectionLimits } from './limits.js';
import { lingerOnClose } from './lingering-close.js';

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

function busy(budget: BodyBudget): Rejection {
  const mib = Math.round(budget.limit / (1024 * 1024));
  return { status: 503, code: 'busy', message: `the webhook already holds ${mib} MiB of request bodies; retry shortly` };
}

/** Names are echoed into every log line of a request: bounded like any value from the request. */
function bounded(value: unknown): string | null {
  return typeof value === 'string' ? (value.length > 253 ? quoteValue(value, 253) : value) : null;
}

/** uid, namespace, name (or generateName*), operation and kind: bound to every log line of a request. */
function requestFields(request: AdmissionRequest | undefined): Record<string, string | null> {
  if (request === undefined) return { uid: null, namespace: null, name: null, operation: null, kind: null };
  const object = request.object as { metadata?: Record<string, unknown> } | undefined;
  const fromObject = displayName(typeof object?.metadata === 'object' ? object.metadata : undefined);
  const name = typeof request.name === 'string' && request.name !== '' ? request.name : fromObject;
  return {
    uid: bounded(request.uid),
    namespace: bounded(request.namespace),
    name: bounded(name),
    operation: bounded(request.operation),
    kind: bounded(request.kind?.kind),
  };
}

/**
 * Writes the answer. `refuse`: the request body was not (or not all) read, so the connection
 * closes after the answer, in stages (lingerOnClose) so that a client still uploading reads it.
 */
function send(res: ServerResponse, answer: Answer, closeAfter: boolean, refuse: boolean, lingerMs: number): void {
  // A string, not a Buffer: node then writes head and body as one chunk (no cork and writev).
  const payload = JSON.stringify(answer.body);
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) };
  if (answer.outcome.reason === 'method-not-allowed') headers['Allow'] = 'POST';
  if (answer.outcome.reason === 'busy') headers['Retry-After'] = 1;
  if (closeAfter || refuse) headers['Connection'] = 'close';
  if (refuse) lingerOnClose(res.socket ?? res.req.socket, lingerMs);
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** Refusals decided on the head alone (also used to answer `Expect: 100-continue` without inviting the body). */
export function refusalOfHead(req: IncomingMessage): Rejection | undefined {
  return checkRequestHead(req.method ?? '', req.headers['content-type'], req.headers['content-length']);
}

/**
 * `POST /mutate`: request hygiene, then the admission handler, then one answer. Never throws or rejects:
 * anything unexpected becomes a 500 Status (before headers) and is logged and counted.
 */
export function createMutateHandler(deps: MutateDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { limits, budget } = deps;
  return async (req, res) => {
    const started = process.hrtime.bigint();
    let answer: Answer | undefined;
    let held = 0;
    try {
      const head = refusalOfHead(req);
      let refuse = false;
      if (head !== undefined) {
        answer = refused(head);
        // A body may follow a refused head (405 with a body, 415, 413): it is never read.
        refuse = true;
      } else {
        const body = await readBody(req, { maxBytes: MAX_BODY_BYTES, budget, idleTimeoutMs: limits.bodyIdleTimeoutMs, timeoutMs: limits.bodyTimeoutMs });
        if (body.kind === 'aborted' || body.kind === 'stalled') {
          const fields = body.kind === 'stalled' ? { afterMs: body.afterMs, received: body.received, declared: bounded(req.headers['content-length']) } : { err: body.error };
          deps.logger.warn({ ...requestFields(undefined), ...fields }, body.kind === 'stalled' ? 'request body stopped arriving; connection closed' : 'client went away while sending the request body');
          deps.metrics.admissions.inc({ result: 'rejected', reason: body.kind });
          deps.summary.add('rejected', body.kind);
          return;
        }
        if (body.kind === 'too-large') {
          answer = refused(tooLarge());
          refuse = true;
        } else if (body.kind === 'busy') {
          answer = refused(busy(budget));
          refuse = true;
        } else {
          held = body.held;
          answer = answerReview(body.text, deps.handler);
        }
      }
      send(res, answer, deps.closing(), refuse, limits.lingerMs);
    } catch (error) {
      answer = failed();
      deps.logger.error({ ...requestFields(undefined), err: error }, 'unexpected error while answering /mutate');
      if (!res.headersSent) send(res, answer, true, false, limits.lingerMs);
      else res.destroy();
    } finally {
      budget.give(held);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { result, reason, patchOperations } = answer.outcome;
    deps.metrics.admissions.inc({ result, reason });
    deps.metrics.admissionDuration.observe({ result }, seconds);
    deps.summary.add(result, reason);
    if (result !== 'error' && !deps.logger.isLevelEnabled('debug')) return;
    // Every admission at debug; at info only the summary line (AdmissionSummary) and errors.
    // Anyone can reach the port: one info line per request would let them fill the log.
    const response = 'response' in answer.body ? answer.body.response : undefined;
    const warnings = response?.warnings ?? [];
    const log = deps.logger.child(requestFields(answer.request));
    const fields = { result, reason, status: answer.status, patchOperations, durationMs: Math.round(seconds * 1e6) / 1e3 };
    const problem = 'message' in answer.body ? answer.body.message : response?.status?.message;
    if (result === 'error') log.error({ ...fields, problem }, 'admission failed');
    else if (result === 'rejected') log.debug({ ...fields, problem }, 'request rejected');
    else if (result === 'denied') log.debug({ ...fields, problem }, 'admission denied');
    else if (reason === 'injected') log.debug({ ...fields, warnings }, 'drain hook injected');
    else if (warnings.length > 0) log.debug({ ...fields, warnings }, 'admission allowed unchanged, with warnings');
    else log.debug(fields, 'admission allowed unchanged');
  };
}
