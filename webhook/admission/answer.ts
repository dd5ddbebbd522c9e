import { admit, type AdmissionOutcome, type AdmitDeps } from './admit.js';
import { decodeReview } from './hygiene.js';
import { boundMessage } from './printable.js';
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

/** What to send back for one request body: an AdmissionReview (200) or a Status (4xx). */
export type Answer =
  | { status: 200; body: AdmissionReviewResponse; outcome: AdmissionOutcome; request: AdmissionRequest }
  | { status: number; body: StatusBody; outcome: AdmissionOutcome; request?: undefined };

export function statusBody(code: number, reason: string, message: string): StatusBody {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message: boundMessage(message) };
}

/** Decodes a body and admits it: the same path for `POST /mutate` and `conndrain review`. Never throws. */
export function answerReview(body: string, deps: AdmitDeps): Answer {
  const decoded = decodeReview(body);
  if (!decoded.ok) {
    const r = decoded.error;
    return { status: r.status, body: statusBody(r.status, r.code, r.message), outcome: { result: 'rejected', reason: r.code, patchOperations: 0 } };
  }
  const { response, outcome } = admit(decoded.value, deps);
  return { status: 200, body: reviewOf(response), outcome, request: decoded.value };
}
