import { isObject as isRecord } from '../../src/inject/json.js';
import { quoteValue } from '../../src/quote.js';
import { fail, ok, type Result } from '../../src/result.js';
import { ADMISSION_API_VERSION, ADMISSION_KIND, type AdmissionRequest } from './types.js';

/**
 * Request hygiene, in one place (after controller-runtime's pkg/webhook/admission http.go):
 * everything that can be wrong with a request before it is an AdmissionRequest with a uid.
 * Each problem is a 4xx with a sentence; nothing here throws.
 */

/**
 * Largest body accepted: 7 MiB. The API server accepts objects up to 3 MiB (its
 * MaxRequestBodyBytes: twice etcd's 1.5 MiB request limit, since JSON shrinks when stored as
 * protobuf). An AdmissionReview carries at most two objects (`object` and, on UPDATE of a
 * workload, `oldObject`) plus request metadata well under 1 MiB: 3 + 3 + 1. Anything larger
 * cannot come from a real API server, so reading it would only cost memory.
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;

/** A request refused before admission: the HTTP status, a code for metrics, and a sentence (`busy`: the body budget, webhook/http). */
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
    | 'busy';
  message: string;
}

const EXPECTED = `an ${ADMISSION_API_VERSION} ${ADMISSION_KIND}`;

/** Method, content type and declared length: checked before a byte of the body is read. */
export function checkRequestHead(method: string, contentType: string | undefined, contentLength: string | undefined): Rejection | undefined {
  if (method !== 'POST') {
    return { status: 405, code: 'method-not-allowed', message: `method ${method} is not allowed on /mutate; expected POST with ${EXPECTED}` };
  }
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') {
    const got = contentType === undefined || contentType === '' ? 'no content type' : `content type ${quoteValue(contentType)}`;
    return { status: 415, code: 'unsupported-media-type', message: `${got} is not supported; expected application/json` };
  }
  if (contentLength !== undefined && Number(contentLength) > MAX_BODY_BYTES) return tooLarge();
  return undefined;
}

export function tooLarge(): Rejection {
  return { status: 413, code: 'body-too-large', message: `request body is larger than ${MAX_BODY_BYTES} bytes (7 MiB), more than any AdmissionReview the API server sends` };
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
  return `a ${typeof value}`;
}

/** Parses and checks the body: JSON, apiVersion/kind, a request with a uid. */
export function decodeReview(body: string): Result<AdmissionRequest, Rejection> {
  if (body.trim() === '') return fail({ status: 400, code: 'empty-body', message: `request body is empty; expected ${EXPECTED}` });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return fail({ status: 400, code: 'malformed-json', message: `request body is not valid JSON; expected ${EXPECTED}` });
  }
  if (!isRecord(parsed)) {
    return fail({ status: 400, code: 'not-admission-review', message: `request body is ${typeName(parsed)}, not ${EXPECTED}` });
  }
  const { apiVersion, kind } = parsed;
  if (apiVersion !== ADMISSION_API_VERSION || kind !== ADMISSION_KIND) {
    return fail({
      status: 400,
      code: 'wrong-api-version',
      message: `expected apiVersion "${ADMISSION_API_VERSION}" and kind "${ADMISSION_KIND}", got apiVersion ${shown(apiVersion)} and kind ${shown(kind)}; register the webhook with admissionReviewVersions: ["v1"]`,
    });
  }
  const request = parsed['request'];
  if (!isRecord(request)) return fail({ status: 400, code: 'missing-request', message: `the ${ADMISSION_KIND} has no request object` });
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '') {
    return fail({ status: 400, code: 'missing-uid', message: 'request.uid is missing or empty; the API server always sets it and expects it back in response.uid' });
  }
  return ok(request as unknown as AdmissionRequest);
}
