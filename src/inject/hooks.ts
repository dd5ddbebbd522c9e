import { DRAIN_API_HOST, DRAIN_API_PREFIX, type HookKind } from '../contract.js';
import { isObject, type JsonObject } from './json.js';

/** Everything a preStop drain hook needs. */
export interface HookSpec {
  kind: HookKind;
  /** Path segment naming the pod in the agent's drain API. */
  drainId: string;
  agentPort: number;
  /** For `sleep` and `exec`: how long to wait, whole seconds, never above the grace period. */
  sleepSeconds: number;
}

/** Stands in for the drain-id in pod templates: ids are per pod, assigned when a pod is admitted. */
export const TEMPLATE_DRAIN_ID = 'assigned-at-admission';

/**
 * The preStop handler for one container.
 *
 * `agent` sets `host: 127.0.0.1`. The kubelet sends lifecycle httpGet requests from the node's
 * network namespace to `host` (default: the pod IP), so 127.0.0.1 reaches the host-network agent.
 * Pod Security: since v1.34 the Baseline level checks this field (KEP-4940, check
 * `hostProbesAndHostLifecycle` in k8s.io/pod-security-admission). The KEP, as revised before GA,
 * allows only unset, `127.0.0.1` and `::1` and rejects every other host, so this hook passes
 * Baseline and Restricted; namespaces pinned to an older `enforce-version` do not check it at all.
 * The first implementation of that check (kubernetes commit 2e94b40) rejected any non-empty host;
 * a cluster running exactly that code would need hook kind `sleep` or `exec` instead.
 */
export function buildPreStop(spec: HookSpec): JsonObject {
  switch (spec.kind) {
    case 'agent':
      return { httpGet: { host: DRAIN_API_HOST, port: spec.agentPort, path: `${DRAIN_API_PREFIX}/${spec.drainId}`, scheme: 'HTTP' } };
    case 'sleep':
      return { sleep: { seconds: spec.sleepSeconds } };
    case 'exec':
      return { exec: { command: ['/bin/sh', '-c', `sleep ${spec.sleepSeconds}`] } };
  }
}

const EXEC_SLEEP = /^sleep \d+$/;

/**
 * True when a preStop handler has the exact shape conndrain writes (of any kind). Used only
 * for containers the pod's `conndrain.io/injected` record names, so an app's own hook that
 * happens to look alike is never taken for ours.
 */
export function looksLikeOwnPreStop(handler: JsonObject): boolean {
  const keys = Object.keys(handler).filter((k) => handler[k] !== undefined);
  if (keys.length !== 1) return false;
  const httpGet = handler['httpGet'];
  if (isObject(httpGet)) {
    return httpGet['host'] === DRAIN_API_HOST && typeof httpGet['path'] === 'string' && httpGet['path'].startsWith(`${DRAIN_API_PREFIX}/`);
  }
  const sleep = handler['sleep'];
  if (isObject(sleep)) return typeof sleep['seconds'] === 'number' && Object.keys(sleep).length === 1;
  const exec = handler['exec'];
  if (isObject(exec)) {
    const command = exec['command'];
    return Array.isArray(command) && command.length === 3 && command[0] === '/bin/sh' && command[1] === '-c'
      && typeof command[2] === 'string' && EXEC_SLEEP.test(command[2]);
  }
  return false;
}
