export { normalizeAddress } from './address.js';
export { SERVICE_NAME_LABEL, serviceNameOf, sliceKey, type EndpointSliceLike } from './endpoint-slice.js';
export { OwnershipIndex } from './ownership.js';
export { entryKey, entryRef, formatEndpoint, IPS_DST_NAT, type ConntrackEntryView, type ConntrackTupleView, type EntryRef } from './entry.js';
export { classifyEntries, classifyEntry, groupByService, type Classification, type EntryVerdict, type StaleEntry, type StaleGroup } from './classify.js';
export { GraceTracker } from './grace.js';
export { planDeletion, type BlockReason, type DeletionPlan } from './deletion-plan.js';
export { livePodIps, podHoldsIps, podIpsOf, type PodLike } from './pod-ips.js';
export { parseInventory, type Inventory } from './inventory-file.js';
