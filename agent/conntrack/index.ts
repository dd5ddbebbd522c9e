/** The conntrack capability: ghost cleanup, the event index routing, running the stale-entry janitor (agent/stale/), table statistics. */
export { ConntrackRunnable, type ConntrackOptions, type FlushedPlan } from './conntrack-runnable.js';
export type { RunningJanitor } from '../stale/index.js';
