import type { AdmissionAnswer } from '../admission/answer.js';
import { encodePatch } from '../admission/patch.js';
import type { AdmissionStatus } from '../admission/types.js';

/** The AdmissionReview version the webhook reads and writes (the configuration asks for v1 only). */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

/** admission.k8s.io/v1 AdmissionResponse on the wire, in the order its fields are written. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  warnings?: string[];
  patchType?: 'JSONPatch';
  /** base64 of the JSON patch. */
  patch?: string;
  status?: AdmissionStatus;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/**
 * The answer as the API server reads it: the only place an AdmissionAnswer becomes wire
 * format (`POST /mutate` and `conndrain review` both send this). Empty warnings and an empty
 * patch are left out, as the API server expects of an unchanged object.
 */
export function encodeReview(answer: AdmissionAnswer): AdmissionReviewResponse {
  const response: AdmissionResponse = { uid: answer.uid, allowed: answer.allowed };
  if (answer.warnings.length > 0) response.warnings = [...answer.warnings];
  if (answer.patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = encodePatch(answer.patch);
  }
  if (answer.status !== undefined) response.status = answer.status;
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}
