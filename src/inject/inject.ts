import { parseDrainRequest, type AnnotationProblem } from '../annotations.js';
import type { InjectConfig } from '../config/webhook.js';
import {
  ANNOTATION_CONTAINERS,
  ANNOTATION_DRAIN,
  ANNOTATION_DRAIN_ID,
  ANNOTATION_INJECTED,
  KUBERNETES_DEFAULT_GRACE_SECONDS,
  LABEL_MANAGED,
  LABEL_MANAGED_VALUE,
  type HookKind,
} from '../contract.js';
import { isDrainId, newDrainId, type RandomSource } from './drain-id.js';
import { buildPreStop, looksLikeOwnPreStop, TEMPLATE_DRAIN_ID } from './hooks.js';
import { copyWith, isObject, jsonEqual, objectAt, type JsonObject } from './json.js';
import { graceSecondsOf, longestKeptSleepSeconds, nativeSidecarNames, plainInitContainerNames, preStopOf, regularContainers, stringAnnotations, type ContainerSlot } from './pod.js';
import { checkKeys, keyWarnings, type KeyProblem } from './keys.js';
import { formatInjectedRecord, parseInjectedRecord } from './record.js';
import { warningsOf, type SkipReason } from './skip.js';
import { quoteValue } from '../quote.js';

export interface InjectOptions {
  /**
   * `pod` (default): a pod being admitted, or a Pod manifest; gets a drain-id.
   * `template`: a workload's pod template; drain-ids are per pod, so none is written (the
   * webhook assigns one when each pod is created and rewrites the template's own hooks).
   */
  scope?: 'pod' | 'template';
}

/** `injected`, `already-injected` (a second pass: nothing to change) or why nothing was done. */
export type InjectReason = 'injected' | 'already-injected' | SkipReason['code'] | 'internal-error';

export interface InjectResult {
  /**
   * The pod to admit: the input itself when nothing changed, else a new object that shares its
   * unchanged parts with the input. Treat both as read-only (clone before mutating).
   */
  pod: unknown;
  changed: boolean;
  reason: InjectReason;
  /** Sentences for the AdmissionResponse warnings / the CLI's stderr. */
  warnings: string[];
  skipped: SkipReason[];
  /** Annotation problems; non-empty means the pod's annotations are invalid (reason `invalid-annotations`). */
  problems: AnnotationProblem[];
  /** conndrain keys the contract does not know or that sit in the wrong place (their warnings lead `warnings`). */
  keyProblems: KeyProblem[];
  /** Containers that carry the drain hook after this pass. */
  hooked: string[];
  /** The hook kind written (set when containers are hooked). */
  hook?: HookKind;
  drainId?: string;
}

function leaveAlone(pod: unknown, reason: InjectReason, skipped: SkipReason[], problems: AnnotationProblem[] = []): InjectResult {
  const warnings = [...warningsOf(skipped.filter((s) => s.code !== 'invalid-annotations')), ...problems.map((p) => `conndrain: ${p.message}`)];
  return { pod, changed: false, reason, warnings, skipped, problems, keyProblems: [], hooked: [] };
}

function invalid(pod: unknown, problems: AnnotationProblem[]): InjectResult {
  const message = `invalid drain annotations: ${problems.map((p) => p.message).join('; ')}`;
  return leaveAlone(pod, 'invalid-annotations', [{ code: 'invalid-annotations', message }], problems);
}

function unknownContainerProblem(raw: string, name: string, spec: JsonObject, regular: ContainerSlot[]): AnnotationProblem {
  // Container names come from the pod before the API server validated it: each is bounded, and so is the list.
  const known = regular.slice(0, 10).map((c) => (c.name.length > 64 ? quoteValue(c.name) : c.name)).join(', ') + (regular.length > 10 ? ` and ${regular.length - 10} more` : '');
  let why = `no regular container named "${name}"`;
  if (nativeSidecarNames(spec).includes(name)) why = `"${name}" is a native sidecar (init container with restartPolicy Always), which conndrain leaves alone`;
  else if (plainInitContainerNames(spec).includes(name)) why = `"${name}" is an init container, which never gets a preStop hook`;
  return {
    code: 'unknown-container',
    annotation: ANNOTATION_CONTAINERS,
    value: raw,
    message: `annotation ${ANNOTATION_CONTAINERS}=${quoteValue(raw)}: ${why}; expected names from: ${known}`,
  };
}

function run(input: unknown, config: InjectConfig, random: RandomSource, scope: 'pod' | 'template'): InjectResult {
  const notAPod = (why: string): InjectResult => leaveAlone(input, 'not-a-pod', [{ code: 'not-a-pod', message: why }]);
  if (!isObject(input)) return notAPod('the object is not a pod (not a JSON object)');
  const metadata = objectAt(input, 'metadata');
  const annotations = stringAnnotations(metadata);
  const request = parseDrainRequest(annotations, { defaultDrainMs: config.defaultDrainMs, maxDurationMs: config.maxDurationMs });
  if (request.kind === 'off') {
    return leaveAlone(input, 'not-annotated', [{ code: 'not-annotated', message: `the pod did not opt in (annotation ${ANNOTATION_DRAIN} is not set)` }]);
  }
  const spec = objectAt(input, 'spec');
  if (spec === undefined || !Array.isArray(spec['containers'])) return notAPod('the object has no spec.containers list, so it is not a pod');
  if (request.kind === 'invalid') return invalid(input, request.problems);
  const settings = request.settings;

  if (spec['hostNetwork'] === true) {
    return leaveAlone(input, 'host-network', [{
      code: 'host-network',
      message: 'hostNetwork pods use the node\'s IP, which conndrain must never hold or flush; no drain hook was injected',
    }]);
  }

  const regular = regularContainers(spec);
  const rawContainers = annotations[ANNOTATION_CONTAINERS] ?? '';
  const targets = settings.containers ?? regular.map((c) => c.name);
  const problems = targets
    .filter((name) => !regular.some((c) => c.name === name))
    .map((name) => unknownContainerProblem(rawContainers, name, spec, regular));
  if (problems.length > 0) return invalid(input, problems);

  const previous = parseInjectedRecord(annotations[ANNOTATION_INJECTED]);
  const ours = new Set(previous?.containers ?? []);
  const hooked: ContainerSlot[] = [];
  const skipped: SkipReason[] = [];
  const notes: string[] = [];
  for (const name of targets) {
    const slot = regular.find((c) => c.name === name);
    if (slot === undefined) continue;
    const existing = preStopOf(slot.container);
    if (existing === undefined || (ours.has(name) && looksLikeOwnPreStop(existing))) {
      hooked.push(slot);
    } else if (config.onExistingPreStop === 'replace') {
      hooked.push(slot);
      notes.push(`conndrain: container ${quoteValue(name)} had its own preStop hook; it was replaced by the drain hook (webhook config on-existing-prestop=replace)`);
    } else {
      skipped.push({
        code: 'existing-prestop',
        container: name,
        message: `container ${quoteValue(name)} already has a preStop hook; it keeps it and gets no drain hook (webhook config on-existing-prestop=replace would replace it)`,
      });
    }
  }
  if (hooked.length === 0) {
    skipped.push({ code: 'no-container-hooked', message: `no container got a drain hook (selected: ${targets.join(', ') || 'none'})` });
    return leaveAlone(input, 'no-container-hooked', skipped);
  }

  const kind = settings.hook ?? config.defaultHook;
  const drainSeconds = Math.ceil(settings.drainMs / 1000);
  const hookedIndexes = new Set(hooked.map((slot) => slot.index));
  // A sleep hook the pod keeps (another container's, or one left by on-existing-prestop=skip)
  // must fit the grace period written here too, or the API server refuses the pod.
  const grace = Math.max(
    graceSecondsOf(spec) ?? KUBERNETES_DEFAULT_GRACE_SECONDS,
    Math.ceil((settings.drainMs + settings.shutdownGraceMs) / 1000),
    longestKeptSleepSeconds(spec, hookedIndexes),
  );
  // The API server rejects a sleep action longer than the grace period.
  const sleepSeconds = Math.min(drainSeconds, grace);

  let drainId = TEMPLATE_DRAIN_ID;
  if (scope === 'pod') {
    const existingId = annotations[ANNOTATION_DRAIN_ID];
    if (existingId !== undefined && isDrainId(existingId)) drainId = existingId;
    else {
      drainId = newDrainId(random);
      if (existingId !== undefined) notes.push(`conndrain: annotation ${ANNOTATION_DRAIN_ID}=${quoteValue(existingId)} is not a drain id written by conndrain; it was replaced`);
    }
  }

  // Copy on write: only the objects on the paths we change are copied; everything else is
  // shared with the input (never mutated). Besides being cheap, this lets fast-json-patch's
  // compare() skip every unchanged subtree by identity.
  const hookSpec = { kind, drainId, agentPort: config.agentPort, sleepSeconds };
  let changed = false;
  const containers = (spec['containers'] as unknown[]).map((container, index) => {
    if (!hookedIndexes.has(index)) return container;
    const original = container as JsonObject;
    const hook = buildPreStop(hookSpec);
    const existing = preStopOf(original);
    if (existing !== undefined && jsonEqual(existing, hook)) return container;
    changed = true;
    return copyWith(original, { lifecycle: copyWith(objectAt(original, 'lifecycle'), { preStop: hook }) });
  });
  const outSpec = copyWith(spec, { containers, terminationGracePeriodSeconds: grace });
  if (spec['terminationGracePeriodSeconds'] !== grace) changed = true;

  const hookedNames = regular.filter((c) => hooked.includes(c)).map((c) => c.name);
  const record = formatInjectedRecord({ hook: kind, containers: hookedNames, drainSeconds, terminationGracePeriodSeconds: grace });
  const labels = objectAt(metadata, 'labels');
  const rawAnnotations = objectAt(metadata, 'annotations');
  const outLabels = copyWith(labels, { [LABEL_MANAGED]: LABEL_MANAGED_VALUE });
  const outAnnotations = copyWith(rawAnnotations, scope === 'pod' ? { [ANNOTATION_DRAIN_ID]: drainId, [ANNOTATION_INJECTED]: record } : { [ANNOTATION_INJECTED]: record });
  if (labels?.[LABEL_MANAGED] !== LABEL_MANAGED_VALUE || rawAnnotations?.[ANNOTATION_INJECTED] !== record) changed = true;
  if (scope === 'pod' && rawAnnotations?.[ANNOTATION_DRAIN_ID] !== drainId) changed = true;
  const out = copyWith(input, { metadata: copyWith(metadata, { labels: outLabels, annotations: outAnnotations }), spec: outSpec });

  return {
    pod: changed ? out : input,
    changed,
    reason: changed ? 'injected' : 'already-injected',
    warnings: [...notes, ...warningsOf(skipped)],
    skipped,
    problems: [],
    keyProblems: [],
    hooked: hookedNames,
    hook: kind,
    ...(scope === 'pod' ? { drainId } : {}),
  };
}

/**
 * Injects the drain hook into a pod (or a pod template): pure, deterministic given `random`,
 * never throws, and idempotent (a second pass over its own output changes nothing).
 */
export function injectPod(pod: unknown, config: InjectConfig, random: RandomSource, options: InjectOptions = {}): InjectResult {
  try {
    const result = run(pod, config, random, options.scope ?? 'pod');
    // Checked whatever the outcome: a misspelt opt-in is exactly the pod that did not opt in.
    const keyProblems = isObject(pod) ? checkKeys(objectAt(pod, 'metadata')) : [];
    return keyProblems.length === 0 ? result : { ...result, keyProblems, warnings: [...keyWarnings(keyProblems), ...result.warnings] };
  } catch (error) {
    // A bug, not bad input: leave the pod as it came and say so.
    const message = `injection failed: ${error instanceof Error ? error.message : String(error)}; the pod was left unchanged`;
    return { pod, changed: false, reason: 'internal-error', warnings: [`conndrain: ${message}`], skipped: [], problems: [], keyProblems: [], hooked: [] };
  }
}
