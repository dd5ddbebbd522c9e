/** The IPVS capability: the weight-0 hold of draining pods' real servers, and flow pinning. */
export { IpvsRunnable, type HoldPlan, type IpvsOptions } from './ipvs-runnable.js';
export type { DrainingPod, HeldServer } from './ipvs-hold.js';
