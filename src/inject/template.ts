import type { AnnotationProblem } from '../annotations.js';
import type { InjectConfig } from '../config/webhook.js';
import { ANNOTATION_DRAIN_ID, DRAIN_API_PREFIX, type HookKind } from '../contract.js';
import { TEMPLATE_DRAIN_ID } from './hooks.js';
import type { RandomSource } from './drain-id.js';
import { injectPod, type InjectReason } from './inject.js';
import { isObject, objectAt, stringAt, type JsonObject } from './json.js';
import { stringAnnotations } from './pod.js';
import { quoteValue } from '../quote.js';

/** Workload kinds whose pod template conndrain checks (webhook) and rewrites (`conndrain inject`). */
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export function isWorkloadKind(kind: unknown): kind is WorkloadKind {
  return WORKLOAD_KINDS.some((k) => k === kind);
}

/** Where the pod template sits: `spec.template`, or `spec.jobTemplate.spec.template` for a CronJob. */
export function podTemplatePath(kind: WorkloadKind): readonly string[] {
  return kind === 'CronJob' ? ['spec', 'jobTemplate', 'spec', 'template'] : ['spec', 'template'];
}

export function podTemplateOf(workload: unknown, kind: WorkloadKind): JsonObject | undefined {
  let node: unknown = workload;
  for (const key of podTemplatePath(kind)) node = objectAt(node, key);
  return isObject(node) ? node : undefined;
}

export interface WorkloadResult {
  /** The workload to write: the input itself when nothing changed, else a modified deep copy. */
  object: unknown;
  changed: boolean;
  reason: InjectReason | 'no-pod-template';
  warnings: string[];
  problems: AnnotationProblem[];
}

function describe(workload: unknown, kind: WorkloadKind): string {
  const name = stringAt(objectAt(workload, 'metadata'), 'name') ?? '<unnamed>';
  return `${kind.toLowerCase()}/${name}`;
}

/** Template-specific advice: a drain-id in a template would be shared by every pod it creates. */
function templateWarnings(template: JsonObject): string[] {
  const id = stringAnnotations(objectAt(template, 'metadata'))[ANNOTATION_DRAIN_ID];
  if (id === undefined) return [];
  return [`conndrain: the pod template sets ${ANNOTATION_DRAIN_ID}=${quoteValue(id)}, so every pod it creates would share one drain id; remove it (the webhook assigns one per pod)`];
}

const NO_RANDOM: RandomSource = (count) => new Uint8Array(count);

/**
 * Injects into a workload's pod template (what `conndrain inject` does with a Deployment,
 * StatefulSet, DaemonSet, ReplicaSet, Job or CronJob). Warnings are prefixed with the
 * workload, like `linkerd inject` reports. Never throws.
 */
export function injectWorkload(workload: unknown, kind: WorkloadKind, config: InjectConfig, random: RandomSource = NO_RANDOM): WorkloadResult {
  const result = passOverTemplate(workload, kind, config, random);
  if (result.changed && result.hook === 'agent') {
    result.warnings.push(`conndrain: ${describe(workload, kind)}: hook kind agent names each pod by a drain id that the webhook assigns when the pod is created; without the webhook these hooks call ${DRAIN_API_PREFIX}/${TEMPLATE_DRAIN_ID}`);
  }
  return result;
}

function passOverTemplate(workload: unknown, kind: WorkloadKind, config: InjectConfig, random: RandomSource): WorkloadResult & { hook?: HookKind } {
  const template = podTemplateOf(workload, kind);
  const who = describe(workload, kind);
  if (template === undefined) {
    return { object: workload, changed: false, reason: 'no-pod-template', warnings: [`conndrain: ${who} has no pod template at ${podTemplatePath(kind).join('.')}; left unchanged`], problems: [] };
  }
  const result = injectPod(template, config, random, { scope: 'template' });
  const warnings = [...templateWarnings(template), ...result.warnings].map((w) => w.replace(/^conndrain: /, `conndrain: ${who}: `));
  if (!result.changed) return { object: workload, changed: false, reason: result.reason, warnings, problems: result.problems, ...(result.hook ? { hook: result.hook } : {}) };
  const object = structuredClone(workload) as JsonObject;
  let parent: JsonObject = object;
  const path = podTemplatePath(kind);
  for (const key of path.slice(0, -1)) parent = parent[key] as JsonObject;
  parent[path[path.length - 1] ?? 'template'] = result.pod;
  return { object, changed: true, reason: result.reason, warnings, problems: result.problems, ...(result.hook ? { hook: result.hook } : {}) };
}

/**
 * What the webhook answers for a workload: the same checks as injection, reported as
 * warnings only (never a patch, never a deny), so a typo shows at `kubectl apply` time
 * instead of as a ReplicaSet event nobody reads.
 */
export function checkWorkload(workload: unknown, kind: WorkloadKind, config: InjectConfig): { warnings: string[]; problems: AnnotationProblem[]; reason: WorkloadResult['reason'] } {
  const result = passOverTemplate(workload, kind, config, NO_RANDOM);
  return { warnings: result.warnings, problems: result.problems, reason: result.reason };
}
