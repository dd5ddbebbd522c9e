import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InjectConfig } from '../../src/config/webhook.js';
import { displayName, type RandomSource } from '../../src/inject/index.js';
import type { Logger } from '../../src/logging.js';
import { answerReview, statusBody, type Answer } from '../admission/answer.js';
import { checkRequestHead, MAX_BODY_BYTES, tooLarge, type Rejection } from '../admission/hygiene.js';
import type { AdmissionRequest } from '../admission/types.js';
import type { WebhookMetrics } from '../metrics.js';
import { readBody } from './body.js';

export interface MutateDeps {
  config: InjectConfig;
  random: RandomSource;
  logger: Logger;
  metrics: WebhookMetrics;
  /** True once shutdown began: answers then carry `Connection: close`. */
  closing: () => boolean;
}

function rejected(r: Rejection): Answer {
  return { status: r.status, body: statusBody(r.status, r.code, r.message), outcome: { result: 'rejected', reason: r.code, patchOperations: 0 } };
}

/** uid, namespace, name (or generateName*), operation and kind: bound to every log line of a request. */
function requestFields(request: AdmissionRequest | undefined): Record<string, string | null> {
  if (request === undefined) return { uid: null, namespace: null, name: null, operation: null, kind: null };
  const object = request.object as { metadata?: Record<string, unknown> } | undefined;
  const fromObject = displayName(typeof object?.metadata === 'object' ? object.metadata : undefined);
  const name = typeof request.name === 'string' && request.name !== '' ? request.name : fromObject;
  return {
    uid: request.uid,
    namespace: typeof request.namespace === 'string' ? request.namespace : null,
    name,
    operation: typeof request.operation === 'string' ? request.operation : null,
    kind: typeof request.kind?.kind === 'string' ? request.kind.kind : null,
  };
}

function send(res: ServerResponse, answer: Answer, closeAfter: boolean): void {
  // A string, not a Buffer: node then writes head and body as one chunk (no cork and writev).
  const payload = JSON.stringify(answer.body);
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) };
  if (answer.outcome.reason === 'method-not-allowed') headers['Allow'] = 'POST';
  if (closeAfter) headers['Connection'] = 'close';
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/**
 * `POST /mutate`: request hygiene, then admission, then one answer. Never throws or rejects:
 * anything unexpected becomes a 500 Status (before headers) and is logged and counted.
 */
export function createMutateHandler(deps: MutateDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const started = process.hrtime.bigint();
    let answer: Answer | undefined;
    try {
      const head = checkRequestHead(req.method ?? '', req.headers['content-type'], req.headers['content-length']);
      let closeAfter = false;
      if (head !== undefined) {
        answer = rejected(head);
        closeAfter = head.code === 'body-too-large';
      } else {
        const body = await readBody(req, MAX_BODY_BYTES);
        if (body.kind === 'aborted') {
          deps.logger.warn({ ...requestFields(undefined), err: body.error }, 'client went away while sending the request body');
          deps.metrics.admissions.inc({ result: 'rejected', reason: 'aborted' });
          return;
        }
        if (body.kind === 'too-large') {
          answer = rejected(tooLarge());
          closeAfter = true;
        } else {
          answer = answerReview(body.text, { config: deps.config, random: deps.random });
        }
      }
      send(res, answer, closeAfter || deps.closing());
    } catch (error) {
      answer = { status: 500, body: statusBody(500, 'internal-error', 'conndrain webhook internal error'), outcome: { result: 'error', reason: 'internal-error', patchOperations: 0 } };
      deps.logger.error({ ...requestFields(undefined), err: error }, 'unexpected error while answering /mutate');
      if (!res.headersSent) send(res, answer, true);
      else res.destroy();
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { result, reason, patchOperations } = answer.outcome;
    deps.metrics.admissions.inc({ result, reason });
    deps.metrics.admissionDuration.observe({ result }, seconds);
    const response = 'response' in answer.body ? answer.body.response : undefined;
    const warnings = response?.warnings ?? [];
    const quiet = result === 'allowed' && reason !== 'injected' && warnings.length === 0;
    if (quiet && !deps.logger.isLevelEnabled('debug')) return;
    const log = deps.logger.child(requestFields(answer.request));
    const fields = { result, reason, status: answer.status, patchOperations, durationMs: Math.round(seconds * 1e6) / 1e3 };
    const problem = 'message' in answer.body ? answer.body.message : response?.status?.message;
    if (result === 'error') log.error({ ...fields, problem }, 'admission failed');
    else if (result === 'rejected') log.warn({ ...fields, problem }, 'request rejected');
    else if (result === 'denied') log.info({ ...fields, problem }, 'admission denied');
    else if (reason === 'injected') log.info({ ...fields, warnings }, 'drain hook injected');
    else if (!quiet) log.info({ ...fields, warnings }, 'admission allowed unchanged, with warnings');
    else log.debug(fields, 'admission allowed unchanged');
  };
}
