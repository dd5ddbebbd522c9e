import { errored, thrownMessage, type AdmissionAnswer } from './answer.js';
import type { AdmissionRequest } from './types.js';

/**
 * The admission seam: one request in (already decoded and checked by webhook/http/hygiene.ts:
 * it has a uid), one answer out, built with the constructors of answer.ts. The HTTP layer and
 * the `review` command only decode, call `handleAdmission` and encode; what the webhook
 * decides lives behind this interface (drain-hook.ts).
 */
export interface AdmissionHandler {
  /** Should not throw; if it does, `handleAdmission` answers `errored` in its place. */
  handle(request: AdmissionRequest): AdmissionAnswer;
}

/**
 * Asks the handler and completes its answer with the request's uid. Never throws: anything the
 * handler throws becomes `errored` (500 in the response status, `allowed: false`).
 */
export function handleAdmission(handler: AdmissionHandler, request: AdmissionRequest): AdmissionAnswer {
  let answer: AdmissionAnswer;
  try {
    answer = handler.handle(request);
  } catch (error) {
    answer = errored(thrownMessage(error));
  }
  return { ...answer, uid: request.uid };
}
