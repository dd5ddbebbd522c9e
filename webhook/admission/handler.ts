import { errored, thrownMessage, type AdmissionOutcome, type AdmissionResult } from './response.js';
import type { AdmissionRequest, AdmissionResponse } from './types.js';

/**
 * The admission seam: one request in (already decoded and checked by hygiene.ts: it has a
 * uid), one result out, built with the constructors of response.ts. The HTTP layer and the
 * `review` command only decode, call `handleAdmission` and encode; what the webhook decides
 * lives behind this interface (drain-hook.ts).
 */
export interface AdmissionHandler {
  /** Should not throw; if it does, `handleAdmission` answers `errored` in its place. */
  handle(request: AdmissionRequest): AdmissionResult;
}

/** An answered admission: the AdmissionResponse (uid filled in) and how it is counted. */
export interface Admission {
  response: AdmissionResponse;
  outcome: AdmissionOutcome;
}

/**
 * Asks the handler and completes its verdict with the request's uid. Never throws: anything the
 * handler throws becomes `errored` (500 in the response status, `allowed: false`).
 */
export function handleAdmission(handler: AdmissionHandler, request: AdmissionRequest): Admission {
  let result: AdmissionResult;
  try {
    result = handler.handle(request);
  } catch (error) {
    result = errored(thrownMessage(error));
  }
  return { response: { uid: request.uid, ...result.verdict }, outcome: result.outcome };
}
