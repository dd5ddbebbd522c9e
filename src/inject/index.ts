/** Injection of the preStop drain hook: pure functions shared by the webhook and the CLI. */
export { injectPod, type InjectOptions, type InjectReason, type InjectResult } from './inject.js';
export { checkWorkload, injectWorkload, isWorkloadKind, podTemplateOf, podTemplatePath, WORKLOAD_KINDS, type WorkloadKind, type WorkloadResult } from './template.js';
export { isDrainId, newDrainId, seededRandom, type RandomSource } from './drain-id.js';
export { buildPreStop, looksLikeOwnPreStop, TEMPLATE_DRAIN_ID, type HookSpec } from './hooks.js';
export { formatInjectedRecord, parseInjectedRecord, type InjectedRecord } from './record.js';
export { warningsOf, type SkipCode, type SkipReason } from './skip.js';
export { displayName } from './pod.js';
export { checkKeys, closestKey, editDistance, keyWarnings, type KeyProblem, type KeyProblemCode } from './keys.js';
export type { JsonObject } from './json.js';
