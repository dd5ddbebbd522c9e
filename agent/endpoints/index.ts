/** The endpoints capability: the cluster from EndpointSlices, merged per pod, and their drain states. */
export { EndpointsRunnable, ENDPOINT_SLICES_PATH, NAMESPACES_PATH, type EndpointsOptions } from './endpoints-runnable.js';
export { EndpointPlanner, type EndpointFlush, type FlushScope } from './endpoint-planner.js';
