/** The pods capability: the watch of managed pods, the pod cache, the first-list gate, and the Events recorder. */
export { PodsRunnable, type PodChange, type PodsOptions } from './pods-runnable.js';
export { eventPodOf, kubeEventSink, PodEvents, type EventPod, type EventSink } from './events.js';
export type { CachedPod, PodCache } from './pod-cache.js';
export type { SyncGate } from './sync-gate.js';
