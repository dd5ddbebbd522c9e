import type { InjectConfig } from '../../src/config/webhook.js';
import { checkWorkload, injectPod, isWorkloadKind, type RandomSource } from '../../src/inject/index.js';
import type { AdmissionHandler } from './handler.js';
import { diffPatch } from './patch.js';
import { allowed, denied, errored, patched, type AdmissionAnswer } from './answer.js';
import type { AdmissionRequest } from './types.js';

export interface DrainHookDeps {
  config: InjectConfig;
  random: RandomSource;
}

function isPodRequest(request: AdmissionRequest): boolean {
  return request.kind?.kind === 'Pod' && (request.kind.group ?? '') === '' && request.subResource === undefined;
}

/**
 * The drain-hook injection as an admission handler. Pods on CREATE get the preStop drain hook
 * and grace period as a JSON patch (injection runs on plain JSON, then the result is diffed);
 * workloads get their pod template checked and warnings back, never a patch or a deny;
 * anything else is allowed untouched.
 */
export class DrainHookInjection implements AdmissionHandler {
  private readonly deps: DrainHookDeps;

  constructor(deps: DrainHookDeps) {
    this.deps = deps;
  }

  handle(request: AdmissionRequest): AdmissionAnswer {
    if (isPodRequest(request)) return this.handlePod(request);
    const kind = request.kind?.kind;
    if (isWorkloadKind(kind) && request.subResource === undefined) {
      if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed('not-create');
      const checked = checkWorkload(request.object, kind, this.deps.config);
      return allowed(checked.problems.length > 0 ? 'invalid-annotations' : 'workload-checked', checked.warnings);
    }
    return allowed('unsupported-kind');
  }

  private handlePod(request: AdmissionRequest): AdmissionAnswer {
    const { config, random } = this.deps;
    // Only creation gets a hook: a running pod's containers cannot gain a preStop hook.
    if (request.operation !== 'CREATE') return allowed('not-create');
    if (request.object === undefined || request.object === null) {
      return denied('missing-object', 'conndrain: request.object is missing from a Pod CREATE review', 'BadRequest');
    }
    const injected = injectPod(request.object, config, random);
    if (injected.reason === 'internal-error') return errored(injected.warnings.join('; '));
    if (injected.reason === 'invalid-annotations' && config.onInvalid === 'deny') {
      return denied('invalid-annotations', `conndrain: invalid drain annotations: ${injected.problems.map((p) => p.message).join('; ')}`);
    }
    if (!injected.changed) return allowed(injected.reason, injected.warnings);
    return patched(injected.reason, diffPatch(request.object, injected.pod), injected.warnings);
  }
}
