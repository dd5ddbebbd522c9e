import { handleAdmission, type AdmissionHandler } from './handler.js';
import { decodeReview, type Rejection } from './hygiene.js';
import { boundMessage } from './printable.js';
import type { AdmissionOutcome } from './response.js';
import { reviewOf, type AdmissionRequest, type AdmissionReviewResponse } from './types.js';

/** metav1.Status, the body of a refused request (the API server logs it). */
export interface StatusBody {
  apiVersion: 'v1';
  kind: 'Status';
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
}

/** What to send back for one request body: an AdmissionReview (200) or a Status (4xx, 5xx). */
export type Answer =
  | { status: 200; body: AdmissionReviewResponse; outcome: AdmissionOutcome; request: AdmissionRequest }
  | { status: number; body: StatusBody; outcome: AdmissionOutcome; request?: undefined };

export function statusBody(code: number, reason: string, message: string): StatusBody {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message: boundMessage(message) };
}

/** A request refused before admission (hygiene, body budget): its Status, counted as `rejected`. */
export function refused(rejection: Rejection): Answer {
  const { status, code, message } = rejection;
  return { status, body: statusBody(status, code, message), outcome: { result: 'rejected', reason: code, patchOperations: 0 } };
}

/** The HTTP layer itself failed (a bug, caught) before it had an admission to send. */
export function failed(): Answer {
  return { status: 500, body: statusBody(500, 'internal-error', 'conndrain webhook internal error'), outcome: { result: 'error', reason: 'internal-error', patchOperations: 0 } };
}

/** Decodes a body, asks the handler, encodes: the same path for `POST /mutate` and `conndrain review`. Never throws. */
export function answerReview(body: string, handler: AdmissionHandler): Answer {
  const decoded = decodeReview(body);
  if (!decoded.ok) return refused(decoded.error);
  const { response, outcome } = handleAdmission(handler, decoded.value);
  return { status: 200, body: reviewOf(response), outcome, request: decoded.value };
}
