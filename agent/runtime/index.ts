/** The runtime capability: health and metrics, the state file. */
export { AgentMetrics } from './metrics.js';
export { Health } from './health.js';
export { closeListener, listen } from './health-server.js';
export { StateKeeper, type StateResume, type StateSources } from './state-keeper.js';
export { joinEnded, splitEnded, validHold } from './state-file.js';
export type { AgentState, SessionRecord, StateOwner } from './state-file.js';
