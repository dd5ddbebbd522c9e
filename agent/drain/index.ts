/** The drain capability: the drain API, the adaptive drain sessions, the open-flow count. */
export { DrainRunnable, type DrainOptions } from './drain-runnable.js';
export type { DatapathProbeOptions } from './flow-visibility-probe.js';
export type { FlowTimeouts } from './flows.js';
