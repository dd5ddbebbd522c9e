/** The plan capability: the incremental drain plan and the loop that runs it. */
export { DrainPlanner, type PlannedFlush, type PlannedTransition } from './drain-planner.js';
export { PLAN_RUN_GAP_MS, PlanLoop, type HoldApplier, type PlanLoopOptions } from './plan-loop.js';
