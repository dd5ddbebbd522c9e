// The inventory file's parser (inventory-file.ts, YAML) is for the CLI only and stays out of this
// barrel: the agent's janitor imports it, and the YAML library is 72 modules on every node.
export { normalizeAddress } from './address.js';
export { pruneEndpointSlice, SERVICE_NAME_LABEL, serviceNameOf, sliceKey, type EndpointSliceLike } from './endpoint-slice.js';
export { OwnershipIndex, type Ownership } from './ownership.js';
export { entryKey, entryRef, formatEndpoint } from './entry.js';
export { classifyCandidates, classifyEntries, combineCandidates, classifyEntry, excludePodIps, groupByService, type PrefilterCounts, type Classification, type EntryVerdict, type StaleEntry, type StaleGroup } from './classify.js';
export { GraceTracker } from './grace.js';
export { planDeletion, type BlockReason, type DeletionPlan } from './deletion-plan.js';
export { livePodIps, podHoldsIps, podIpsOf, type PodLike } from './pod-ips.js';
export { scanStaleEntries, type DnatScanner, type StaleScanResult } from './scan.js';
