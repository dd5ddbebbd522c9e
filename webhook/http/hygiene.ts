import type { IncomingMessage } from 'node:http';
import { quoteValue } from '../../src/quote.js';
import { fail, ok, type Result } from '../../src/result.js';
import { boundMessage } from '../admission/printable.js';
import type { AdmissionRequest } from '../admission/types.js';
import type { BodyBudget } from './body-budget.js';
import { ADMISSION_API_VERSION, ADMISSION_KIND } from './review.js';

/**
 * Request hygiene, in one place (after controller-runtime's pkg/webhook/admission http.go):
 * everything that can be wrong with a request before it is an AdmissionRequest with a uid,
 * which is all the admission handler ever sees. Each problem is a 4xx (503 for the body
 * budget) with one bounded, printable sentence; nothing here throws.
 */

/**
 * Largest body accepted: 7 MiB. The API server accepts objects up to 3 MiB (its
 * MaxRequestBodyBytes: twice etcd's 1.5 MiB request limit, since JSON shrinks when stored as
 * protobuf). An AdmissionReview carries at most two objects (`object` and, on UPDATE of a
 * workload, `oldObject`) plus request metadata well under 1 MiB: 3 + 3 + 1. Anything larger
 * cannot come from a real API server, so reading it would only cost memory.
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;

/** A request refused before admission: the HTTP status, a code for metrics, and a sentence (sent as a Status, status.ts). */
export interface Rejection {
  status: number;
  code:
    | 'method-not-allowed'
    | 'unsupported-media-type'
    | 'body-too-large'
    | 'empty-body'
    | 'malformed-json'
    | 'not-admission-review'
    | 'wrong-api-version'
    | 'missing-request'
    | 'missing-uid'
    | 'malformed-request'
    | 'busy'
    /** Not a refusal: the HTTP layer itself failed (a bug, caught) before it had an answer; a 500, counted as an error. */
    | 'internal-error';
  message: string;
}

function rejection(status: number, code: Rejection['code'], message: string): Rejection {
  return { status, code, message: boundMessage(message) };
}

const EXPECTED = `an ${ADMISSION_API_VERSION} ${ADMISSION_KIND}`;

/**
 * Method, content type and declared length: checked before a byte of the body is read (also
 * to answer `Expect: 100-continue` without inviting a body that would be refused).
 */
export function checkRequestHead(req: IncomingMessage): Rejection | undefined {
  const method = req.method ?? '';
  if (method !== 'POST') {
    return rejection(405, 'method-not-allowed', `method ${method} is not allowed on /mutate; expected POST with ${EXPECTED}`);
  }
  const contentType = req.headers['content-type'];
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') {
    const got = contentType === undefined || contentType === '' ? 'no content type' : `content type ${quoteValue(contentType)}`;
    return rejection(415, 'unsupported-media-type', `${got} is not supported; expected application/json`);
  }
  const contentLength = req.headers['content-length'];
  if (contentLength !== undefined && Number(contentLength) > MAX_BODY_BYTES) return tooLarge();
  return undefined;
}

export function tooLarge(): Rejection {
  return rejection(413, 'body-too-large', `request body is larger than ${MAX_BODY_BYTES} bytes (7 MiB), more than any AdmissionReview the API server sends`);
}

/** The body would take the bodies held at once past their budget (ConnectionLimits.bodyBudgetBytes). */
export function busy(budget: BodyBudget): Rejection {
  const mib = Math.round(budget.limit / (1024 * 1024));
  return rejection(503, 'busy', `the webhook already holds ${mib} MiB of request bodies; retry shortly`);
}

/** A value from the request as a message shows it: strings quoted and bounded, anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return quoteValue(value);
  if (value === undefined || value === null) return 'null';
  return typeName(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The string fields of AdmissionRequest: absent, or a string. */
const STRING_FIELDS = ['subResource', 'name', 'namespace', 'operation'] as const;
/** The group/version/kind objects of AdmissionRequest (`resource` names its kind `resource`): absent, or an object of strings. */
const GVK_FIELDS = [['kind', ['group', 'version', 'kind']], ['resource', ['group', 'version', 'resource']]] as const;

/**
 * The request's fields as AdmissionRequest types them, as decoding into Go's typed struct
 * checks them for controller-runtime: what is wrong, or undefined. Only the fields the type
 * names; `object` and `oldObject` are any JSON.
 */
function requestShapeProblem(request: Record<string, unknown>): string | undefined {
  for (const field of STRING_FIELDS) {
    const value = request[field];
    if (value !== undefined && typeof value !== 'string') return `request.${field} is ${typeName(value)}, expected a string`;
  }
  for (const [field, keys] of GVK_FIELDS) {
    const value = request[field];
    if (value === undefined) continue;
    if (!isRecord(value)) return `request.${field} is ${typeName(value)}, expected an object with ${keys.join(', ')}`;
    for (const key of keys) {
      if (value[key] !== undefined && typeof value[key] !== 'string') return `request.${field}.${key} is ${typeName(value[key])}, expected a string`;
    }
  }
  const dryRun = request['dryRun'];
  if (dryRun !== undefined && typeof dryRun !== 'boolean') return `request.dryRun is ${typeName(dryRun)}, expected a boolean`;
  return undefined;
}

/** Parses and checks the body: JSON, apiVersion/kind, a request with a uid and fields of the right types. */
export function decodeReview(body: string): Result<AdmissionRequest, Rejection> {
  if (body.trim() === '') return fail(rejection(400, 'empty-body', `request body is empty; expected ${EXPECTED}`));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return fail(rejection(400, 'malformed-json', `request body is not valid JSON; expected ${EXPECTED}`));
  }
  if (!isRecord(parsed)) {
    return fail(rejection(400, 'not-admission-review', `request body is ${typeName(parsed)}, not ${EXPECTED}`));
  }
  const { apiVersion, kind } = parsed;
  if (apiVersion !== ADMISSION_API_VERSION || kind !== ADMISSION_KIND) {
    return fail(rejection(
      400,
      'wrong-api-version',
      `expected apiVersion "${ADMISSION_API_VERSION}" and kind "${ADMISSION_KIND}", got apiVersion ${shown(apiVersion)} and kind ${shown(kind)}; register the webhook with admissionReviewVersions: ["v1"]`,
    ));
  }
  const request = parsed['request'];
  if (!isRecord(request)) return fail(rejection(400, 'missing-request', `the ${ADMISSION_KIND} has no request object`));
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '') {
    return fail(rejection(400, 'missing-uid', 'request.uid is missing or empty; the API server always sets it and expects it back in response.uid'));
  }
  const problem = requestShapeProblem(request);
  if (problem !== undefined) return fail(rejection(400, 'malformed-request', `${problem} (in ${EXPECTED})`));
  return ok(request as unknown as AdmissionRequest);
}
