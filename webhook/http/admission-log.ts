import { displayName } from '../../src/inject/index.js';
import type { Logger } from '../../log/logger.js';
import { quoteValue } from '../../src/quote.js';
import type { Result } from '../../src/result.js';
import { resultOf } from '../admission/answer.js';
import type { AdmissionRequest } from '../admission/types.js';
import type { Admitted } from './admit.js';
import type { Rejection } from './hygiene.js';

/** Names are echoed into every log line of a request: bounded like any value from the request. */
export function bounded(value: unknown): string | null {
  return typeof value === 'string' ? (value.length > 253 ? quoteValue(value, 253) : value) : null;
}

/** uid, namespace, name (or generateName*), operation and kind: bound to every log line of a request. */
export function requestFields(request: AdmissionRequest | undefined): Record<string, string | null> {
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

/** How a request is counted and logged, read from its answer or its refusal. */
export function tallyOf(reply: Result<Admitted, Rejection>): { result: string; reason: string; status: number; patchOperations: number } {
  if (reply.ok) {
    const { answer } = reply.value;
    return { result: resultOf(answer), reason: answer.reason, status: 200, patchOperations: answer.patch.length };
  }
  const { code, status } = reply.error;
  return { result: code === 'internal-error' ? 'error' : 'rejected', reason: code, status, patchOperations: 0 };
}

/**
 * Every admission at debug; at info only errors (the summary line, AdmissionSummary, counts
 * the rest). Anyone can reach the port: one info line per request would let them fill the log.
 */
export function logReply(logger: Logger, reply: Result<Admitted, Rejection>, durationMs: number): void {
  const fields = { ...tallyOf(reply), durationMs };
  if (fields.result !== 'error' && !logger.isLevelEnabled('debug')) return;
  if (!reply.ok) {
    const log = logger.child(requestFields(undefined));
    const problem = reply.error.message;
    if (fields.result === 'error') log.error({ ...fields, problem }, 'admission failed');
    else log.debug({ ...fields, problem }, 'request rejected');
    return;
  }
  const { request, answer } = reply.value;
  const log = logger.child(requestFields(request));
  const { warnings } = answer;
  const problem = answer.status?.message;
  if (fields.result === 'error') log.error({ ...fields, problem }, 'admission failed');
  else if (fields.result === 'denied') log.debug({ ...fields, problem }, 'admission denied');
  else if (fields.reason === 'injected') log.debug({ ...fields, warnings }, 'drain hook injected');
  else if (warnings.length > 0) log.debug({ ...fields, warnings }, 'admission allowed unchanged, with warnings');
  else log.debug(fields, 'admission allowed unchanged');
}
