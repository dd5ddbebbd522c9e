import { encodePatch, type PatchOperation } from './patch.js';
import { boundMessage, boundWarnings } from './printable.js';
import type { AdmissionResponse } from './types.js';

/**
 * The answers an admission handler can give, one constructor each (the vocabulary of
 * controller-runtime's pkg/webhook/admission response.go): `allowed`, `patched`, `denied`,
 * `errored`. Every text a constructor puts into the response goes through the bounded,
 * printable checks of printable.ts, so no handler can send what the API server would drop.
 */

/** How an admission ended, for the metric labels and the log line. */
export interface AdmissionOutcome {
  /** `allowed` (with or without patch), `denied` (annotations invalid), `error` (a bug, caught), `rejected` (request hygiene: a 4xx). */
  result: 'allowed' | 'denied' | 'error' | 'rejected';
  /** Why: `injected`, `already-injected`, a skip code, `workload-checked`, `unsupported-kind`, ... */
  reason: string;
  patchOperations: number;
}

/** An AdmissionResponse before the request's uid is filled in. */
export type AdmissionVerdict = Omit<AdmissionResponse, 'uid'>;

/** What a handler decided about one request: the response to send and how it is counted. */
export interface AdmissionResult {
  verdict: AdmissionVerdict;
  outcome: AdmissionOutcome;
}

/** The two statuses a deny carries: the request is refused (403) or cannot be admitted as sent (400). */
export const DENY_STATUS = {
  Forbidden: 403,
  BadRequest: 400,
} as const;

export type DenyReason = keyof typeof DENY_STATUS;

function withWarnings(verdict: AdmissionVerdict, warnings: readonly string[]): AdmissionVerdict {
  if (warnings.length > 0) verdict.warnings = boundWarnings(warnings);
  return verdict;
}

/** Admitted unchanged; `warnings` reach the user (kubectl prints them). */
export function allowed(reason: string, warnings: readonly string[] = []): AdmissionResult {
  return { verdict: withWarnings({ allowed: true }, warnings), outcome: { result: 'allowed', reason, patchOperations: 0 } };
}

/** Admitted with these JSON patch operations applied (none: the same as `allowed`). */
export function patched(reason: string, operations: readonly PatchOperation[], warnings: readonly string[] = []): AdmissionResult {
  if (operations.length === 0) return allowed(reason, warnings);
  const verdict = withWarnings({ allowed: true }, warnings);
  verdict.patchType = 'JSONPatch';
  verdict.patch = encodePatch(operations);
  return { verdict, outcome: { result: 'allowed', reason, patchOperations: operations.length } };
}

/** Refused: the API server rejects the object and shows `message` to the user. */
export function denied(reason: string, message: string, status: DenyReason = 'Forbidden'): AdmissionResult {
  return {
    verdict: { allowed: false, status: { code: DENY_STATUS[status], reason: status, message: boundMessage(message) } },
    outcome: { result: 'denied', reason, patchOperations: 0 },
  };
}

/**
 * The handler failed (a bug, caught): a 500 in the response status, `allowed: false`. The API
 * server takes this as a decision, not as a failed call: it refuses the object with this
 * message, whatever the webhook's failurePolicy (which covers unreachable or unreadable answers).
 */
export function errored(message: string, reason = 'internal-error'): AdmissionResult {
  return {
    verdict: { allowed: false, status: { code: 500, reason: 'InternalError', message: boundMessage(message) } },
    outcome: { result: 'error', reason, patchOperations: 0 },
  };
}

/** The message of `errored` for something a handler threw. */
export function thrownMessage(error: unknown): string {
  return `conndrain: internal error: ${error instanceof Error ? error.message : String(error)}`;
}
