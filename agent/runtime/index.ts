/** The runtime capability: health and metrics, the state file, the handover link between instances, the phase. */
export { AgentMetrics } from './metrics.js';
export { AgentPhase } from './phase.js';
export { ForeignSessions } from './foreign-sessions.js';
export { Handover, type HandedSessions } from './handover.js';
export { Health } from './health.js';
export { closeListener, listen } from './health-server.js';
export { StateKeeper, type StateResume, type StateSources } from './state-keeper.js';
export type { AgentState, SessionRecord, StateOwner } from './state-file.js';
