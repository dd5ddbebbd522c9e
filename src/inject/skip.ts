/**
 * Why a pod or a container got no drain hook, as data (after Linkerd's pkg/inject reasons):
 * the same `{code, message}` feeds the AdmissionResponse warnings, the log line and the
 * `reason` label of the admissions metric.
 */
export type SkipCode =
  /** The pod did not opt in (`conndrain.io/drain` absent or "false"). Silent: no warning. */
  | 'not-annotated'
  /** At least one drain annotation is invalid; the problems say which. */
  | 'invalid-annotations'
  /** The object has no `spec.containers` list. */
  | 'not-a-pod'
  /** hostNetwork pods have the node's IP: holding or flushing it would touch every pod's traffic. */
  | 'host-network'
  /** This container already has a preStop hook and the config says `skip`. */
  | 'existing-prestop'
  /** Every selected container was skipped, so nothing was injected. */
  | 'no-container-hooked';

export interface SkipReason {
  code: SkipCode;
  message: string;
  /** Set when the reason concerns one container rather than the pod. */
  container?: string;
}

/** Codes that do not deserve a warning to the human who created the pod. */
const SILENT: ReadonlySet<SkipCode> = new Set(['not-annotated']);

export function warningsOf(reasons: readonly SkipReason[]): string[] {
  return reasons.filter((r) => !SILENT.has(r.code)).map((r) => `conndrain: ${r.message}`);
}
