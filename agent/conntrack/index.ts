/** The conntrack capability: ghost cleanup, the event index routing, the stale-entry janitor, table statistics. */
export { ConntrackRunnable, type ConntrackOptions, type FlushedPlan } from './conntrack-runnable.js';
export type { RunningJanitor } from './janitor/index.js';
