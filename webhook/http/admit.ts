import { ok, type Result } from '../../src/result.js';
import type { AdmissionAnswer } from '../admission/answer.js';
import { handleAdmission, type AdmissionHandler } from '../admission/handler.js';
import type { AdmissionRequest } from '../admission/types.js';
import { decodeReview, type Rejection } from './hygiene.js';

/** A request that passed hygiene and the handler's answer to it (uid filled in). */
export interface Admitted {
  request: AdmissionRequest;
  answer: AdmissionAnswer;
}

/**
 * A request body to its answer: decoded and checked (hygiene.ts), then asked of the handler.
 * The same path for `POST /mutate` and `conndrain review`. Never throws.
 */
export function admitReview(body: string, handler: AdmissionHandler): Result<Admitted, Rejection> {
  const decoded = decodeReview(body);
  if (!decoded.ok) return decoded;
  return ok({ request: decoded.value, answer: handleAdmission(handler, decoded.value) });
}
