import {
  ANNOTATION_CONTAINERS,
  ANNOTATION_DRAIN,
  ANNOTATION_HOOK,
  ANNOTATION_MIN_DRAIN,
  ANNOTATION_SHUTDOWN_GRACE,
  DEFAULT_MIN_DRAIN_SECONDS,
  DEFAULT_SHUTDOWN_GRACE_SECONDS,
  HOOK_KINDS,
  type HookKind,
} from './contract.js';
import { DURATION_HINT, formatDuration, parseDurationMs } from './duration.js';
import { fail, ok, type Result } from './result.js';
import { quoteValue } from './quote.js';

/** What an app team asked for, parsed and bounds-checked. Durations in milliseconds. */
export interface DrainSettings {
  /** The longest drain (`conndrain.io/drain`). */
  drainMs: number;
  /** An adaptive drain never ends before this (`conndrain.io/min-drain`). */
  minDrainMs: number;
  /** Time the app needs after SIGTERM (`conndrain.io/shutdown-grace`). */
  shutdownGraceMs: number;
  /** Containers that get the hook; null means every regular container. */
  containers: string[] | null;
  /** Hook kind asked for; null means the webhook's configured default. */
  hook: HookKind | null;
}

export type AnnotationProblemCode =
  | 'invalid-duration'
  | 'zero-drain'
  | 'above-maximum'
  | 'min-drain-above-drain'
  | 'unknown-hook'
  | 'invalid-containers'
  /** Raised by injection, which knows the pod: a listed name is not a regular container. */
  | 'unknown-container';

/** One rejected annotation: which one, which value, and what would be accepted. */
export interface AnnotationProblem {
  code: AnnotationProblemCode;
  annotation: string;
  value: string;
  message: string;
}

export interface AnnotationLimits {
  /** Value used when `conndrain.io/drain` is `true`. */
  defaultDrainMs: number;
  /** Upper bound for every duration annotation (config; default 1h). */
  maxDurationMs: number;
}

export const DEFAULT_ANNOTATION_LIMITS: AnnotationLimits = {
  defaultDrainMs: 30_000,
  maxDurationMs: 3_600_000,
};

/** `off`: the pod did not opt in. `on`: settings parsed. `invalid`: at least one problem. */
export type DrainRequest =
  | { kind: 'off' }
  | { kind: 'on'; settings: DrainSettings }
  | { kind: 'invalid'; problems: AnnotationProblem[] };

type Annotations = Readonly<Record<string, string | undefined>> | undefined;

const CONTAINER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function problem(code: AnnotationProblemCode, annotation: string, value: string, why: string): AnnotationProblem {
  return { code, annotation, value, message: `annotation ${annotation}=${quoteValue(value)}: ${why}` };
}

function parseBoundedDuration(
  annotation: string,
  raw: string,
  limits: AnnotationLimits,
  allowZero: boolean,
): Result<number, AnnotationProblem> {
  const parsed = parseDurationMs(raw);
  if (!parsed.ok) return fail(problem('invalid-duration', annotation, raw, parsed.error));
  if (!allowZero && parsed.value === 0) {
    return fail(problem('zero-drain', annotation, raw, `a drain of zero does nothing; expected ${DURATION_HINT} above 0, or remove the annotation`));
  }
  if (parsed.value > limits.maxDurationMs) {
    return fail(problem('above-maximum', annotation, raw, `longer than the maximum ${formatDuration(limits.maxDurationMs)}; expected ${DURATION_HINT} up to ${formatDuration(limits.maxDurationMs)}`));
  }
  return ok(parsed.value);
}

function parseDrain(raw: string, limits: AnnotationLimits): Result<number | null, AnnotationProblem> {
  const value = raw.trim().toLowerCase();
  if (value === 'false') return ok(null);
  if (value === 'true') return ok(limits.defaultDrainMs);
  const parsed = parseBoundedDuration(ANNOTATION_DRAIN, raw, limits, false);
  if (!parsed.ok) {
    const p = parsed.error;
    return fail({ ...p, message: `${p.message} (or "true" for the default ${formatDuration(limits.defaultDrainMs)})` });
  }
  return parsed;
}

function parseHook(raw: string): Result<HookKind, AnnotationProblem> {
  const value = raw.trim();
  const kind = HOOK_KINDS.find((k) => k === value);
  if (kind === undefined) {
    return fail(problem('unknown-hook', ANNOTATION_HOOK, raw, `unknown hook kind; expected one of ${HOOK_KINDS.join(', ')}`));
  }
  return ok(kind);
}

function parseContainers(raw: string): Result<string[], AnnotationProblem> {
  const names = raw.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const bad = names.filter((n) => !CONTAINER_NAME.test(n) || n.length > 63);
  if (names.length === 0 || bad.length > 0) {
    const shown = bad.slice(0, 3).map((n) => quoteValue(n)).join(', ') + (bad.length > 3 ? ` and ${bad.length - 3} more` : '');
    const which = bad.length > 0 ? `${shown} ${bad.length === 1 ? 'is not a container name' : 'are not container names'}` : 'the list names no container';
    return fail(problem('invalid-containers', ANNOTATION_CONTAINERS, raw, `${which}; expected a comma-separated list of container names like "app,proxy"`));
  }
  return ok([...new Set(names)]);
}

/**
 * Reads the drain annotations of a pod (or pod template). Never throws: every problem is
 * returned as data, all of them at once, so a human fixes every typo in one round.
 */
export function parseDrainRequest(annotations: Annotations, limits: AnnotationLimits = DEFAULT_ANNOTATION_LIMITS): DrainRequest {
  // Annotations come from untrusted JSON: a non-string value is treated as absent, never trusted.
  const get = (name: string): string | undefined => {
    const value: unknown = annotations?.[name];
    return typeof value === 'string' ? value : undefined;
  };
  const rawDrain = get(ANNOTATION_DRAIN);
  if (rawDrain === undefined) return { kind: 'off' };
  const problems: AnnotationProblem[] = [];

  const drain = parseDrain(rawDrain, limits);
  if (!drain.ok) problems.push(drain.error);
  else if (drain.value === null) return { kind: 'off' };

  const durationOr = (name: string, fallbackMs: number): number => {
    const raw = get(name);
    if (raw === undefined) return fallbackMs;
    const parsed = parseBoundedDuration(name, raw, limits, true);
    if (!parsed.ok) {
      problems.push(parsed.error);
      return fallbackMs;
    }
    return parsed.value;
  };
  const minDrainMs = durationOr(ANNOTATION_MIN_DRAIN, DEFAULT_MIN_DRAIN_SECONDS * 1000);
  const shutdownGraceMs = durationOr(ANNOTATION_SHUTDOWN_GRACE, DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000);

  let containers: string[] | null = null;
  const rawContainers = get(ANNOTATION_CONTAINERS);
  if (rawContainers !== undefined) {
    const parsed = parseContainers(rawContainers);
    if (parsed.ok) containers = parsed.value;
    else problems.push(parsed.error);
  }

  let hook: HookKind | null = null;
  const rawHook = get(ANNOTATION_HOOK);
  if (rawHook !== undefined) {
    const parsed = parseHook(rawHook);
    if (parsed.ok) hook = parsed.value;
    else problems.push(parsed.error);
  }

  if (problems.length > 0 || !drain.ok || drain.value === null) return { kind: 'invalid', problems };

  const drainMs = drain.value;
  const rawMin = get(ANNOTATION_MIN_DRAIN);
  if (rawMin !== undefined && minDrainMs > drainMs) {
    problems.push(problem('min-drain-above-drain', ANNOTATION_MIN_DRAIN, rawMin, `longer than ${ANNOTATION_DRAIN} (${formatDuration(drainMs)}); expected a duration up to ${formatDuration(drainMs)}`));
    return { kind: 'invalid', problems };
  }
  // The default min-drain never exceeds a short explicit drain.
  return { kind: 'on', settings: { drainMs, minDrainMs: Math.min(minDrainMs, drainMs), shutdownGraceMs, containers, hook } };
}
