import type { PatchOperation } from './patch.js';
import { boundMessage, boundWarnings } from './printable.js';
import type { AdmissionStatus } from './types.js';

/**
 * The one answer to an admission request, from the handler to the HTTP edge (the shape of
 * controller-runtime's admission.Response). It is data, not wire format: the patch is a list
 * of operations and the warnings a list of strings, so the log line and the metrics read them
 * from here; webhook/http/review.ts encodes it once, into the AdmissionReview sent back.
 */
export interface AdmissionAnswer {
  /** The request's uid: empty from the constructors, filled in by `handleAdmission`. */
  uid: string;
  allowed: boolean;
  /** Why it was not allowed (403 or 400 from `denied`, 500 from `errored`); absent when allowed. */
  status?: AdmissionStatus;
  /** JSON patch operations to apply; empty when the object is admitted unchanged. */
  patch: readonly PatchOperation[];
  /** Shown to the user (kubectl prints them); already printable and bounded (printable.ts). */
  warnings: readonly string[];
  /** Why, for the `reason` metric label and the log: `injected`, a skip code, `workload-checked`, ... */
  reason: string;
}

/** The status of `errored`; `denied` never uses it, so it tells an error from a deny. */
const ERRORED_CODE = 500;

/** How an answer is counted (the `result` metric label): allowed (with or without patch), denied, or error (a bug, caught). */
export function resultOf(answer: AdmissionAnswer): 'allowed' | 'denied' | 'error' {
  if (answer.allowed) return 'allowed';
  return answer.status?.code === ERRORED_CODE ? 'error' : 'denied';
}

/*
 * The constructors, one per kind of answer (the vocabulary of controller-runtime's
 * pkg/webhook/admission response.go). Every text they put into an answer goes through the
 * bounded, printable checks of printable.ts, so no handler can send what the API server drops.
 */

/** The two statuses a deny carries: the request is refused (403) or cannot be admitted as sent (400). */
export const DENY_STATUS = {
  Forbidden: 403,
  BadRequest: 400,
} as const;

export type DenyReason = keyof typeof DENY_STATUS;

/** Admitted unchanged; `warnings` reach the user. */
export function allowed(reason: string, warnings: readonly string[] = []): AdmissionAnswer {
  return { uid: '', allowed: true, patch: [], warnings: boundWarnings(warnings), reason };
}

/** Admitted with these JSON patch operations applied (none: the same as `allowed`). */
export function patched(reason: string, operations: readonly PatchOperation[], warnings: readonly string[] = []): AdmissionAnswer {
  return { ...allowed(reason, warnings), patch: operations };
}

/** Refused: the API server rejects the object and shows `message` to the user. */
export function denied(reason: string, message: string, status: DenyReason = 'Forbidden'): AdmissionAnswer {
  return { uid: '', allowed: false, status: { code: DENY_STATUS[status], reason: status, message: boundMessage(message) }, patch: [], warnings: [], reason };
}

/**
 * The handler failed (a bug, caught): a 500 in the response status, `allowed: false`. The API
 * server takes this as a decision, not as a failed call: it refuses the object with this
 * message, whatever the webhook's failurePolicy (which covers unreachable or unreadable answers).
 */
export function errored(message: string, reason = 'internal-error'): AdmissionAnswer {
  return { uid: '', allowed: false, status: { code: ERRORED_CODE, reason: 'InternalError', message: boundMessage(message) }, patch: [], warnings: [], reason };
}

/** The message of `errored` for something a handler threw. */
export function thrownMessage(error: unknown): string {
  return `conndrain: internal error: ${error instanceof Error ? error.message : String(error)}`;
}
