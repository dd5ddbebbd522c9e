import type { InjectConfig } from '../../src/config/webhook.js';
import { checkWorkload, injectPod, isWorkloadKind, type RandomSource } from '../../src/inject/index.js';
import type { AdmissionRequest, AdmissionResponse } from './types.js';
import { diffPatch, encodePatch } from './patch.js';
import { boundMessage, boundWarnings } from './printable.js';

/** How an admission ended, for the metric labels and the log line. */
export interface AdmissionOutcome {
  /** `allowed` (with or without patch), `denied` (annotations invalid), `error` (a bug, caught), `rejected` (request hygiene: a 4xx). */
  result: 'allowed' | 'denied' | 'error' | 'rejected';
  /** Why: `injected`, `already-injected`, a skip code, `workload-checked`, `unsupported-kind`, ... */
  reason: string;
  patchOperations: number;
}

export interface Admission {
  response: AdmissionResponse;
  outcome: AdmissionOutcome;
}

export interface AdmitDeps {
  config: InjectConfig;
  random: RandomSource;
}


function allow(uid: string, reason: string, warnings: string[] = []): Admission {
  const response: AdmissionResponse = { uid, allowed: true };
  if (warnings.length > 0) response.warnings = boundWarnings(warnings);
  return { response, outcome: { result: 'allowed', reason, patchOperations: 0 } };
}

function isPodRequest(request: AdmissionRequest): boolean {
  return request.kind?.kind === 'Pod' && (request.kind.group ?? '') === '' && request.subResource === undefined;
}

function admitPod(request: AdmissionRequest, deps: AdmitDeps): Admission {
  const uid = request.uid;
  // Only creation gets a hook: a running pod's containers cannot gain a preStop hook.
  if (request.operation !== 'CREATE') return allow(uid, 'not-create');
  if (request.object === undefined || request.object === null) {
    return {
      response: { uid, allowed: false, status: { code: 400, reason: 'BadRequest', message: 'conndrain: request.object is missing from a Pod CREATE review' } },
      outcome: { result: 'denied', reason: 'missing-object', patchOperations: 0 },
    };
  }
  const injected = injectPod(request.object, deps.config, deps.random);
  if (injected.reason === 'internal-error') {
    return {
      response: { uid, allowed: false, status: { code: 500, reason: 'InternalError', message: boundMessage(injected.warnings.join('; ')) } },
      outcome: { result: 'error', reason: 'internal-error', patchOperations: 0 },
    };
  }
  if (injected.reason === 'invalid-annotations' && deps.config.onInvalid === 'deny') {
    const message = `conndrain: invalid drain annotations: ${injected.problems.map((p) => p.message).join('; ')}`;
    return {
      response: { uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: boundMessage(message) } },
      outcome: { result: 'denied', reason: 'invalid-annotations', patchOperations: 0 },
    };
  }
  const admission = allow(uid, injected.reason, injected.warnings);
  if (injected.changed) {
    const operations = diffPatch(request.object, injected.pod);
    if (operations.length > 0) {
      admission.response.patchType = 'JSONPatch';
      admission.response.patch = encodePatch(operations);
      admission.outcome.patchOperations = operations.length;
    }
  }
  return admission;
}

/**
 * Answers one AdmissionRequest (already checked by hygiene: uid present). Pods on CREATE get
 * the drain hook as a JSON patch; workloads get their pod template checked and warnings back,
 * never a patch or a deny; anything else is allowed untouched. Never throws.
 */
export function admit(request: AdmissionRequest, deps: AdmitDeps): Admission {
  try {
    if (isPodRequest(request)) return admitPod(request, deps);
    const kind = request.kind?.kind;
    if (isWorkloadKind(kind) && request.subResource === undefined) {
      if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow(request.uid, 'not-create');
      const checked = checkWorkload(request.object, kind, deps.config);
      return allow(request.uid, checked.problems.length > 0 ? 'invalid-annotations' : 'workload-checked', checked.warnings);
    }
    return allow(request.uid, 'unsupported-kind');
  } catch (error) {
    const message = `conndrain: internal error: ${error instanceof Error ? error.message : String(error)}`;
    return {
      response: { uid: request.uid, allowed: false, status: { code: 500, reason: 'InternalError', message: boundMessage(message) } },
      outcome: { result: 'error', reason: 'internal-error', patchOperations: 0 },
    };
  }
}
