/**
 * `netlink-native/memory`: in-memory stand-ins of the kernel behind the same interfaces
 * (ConntrackApi, ConntrackEventsApi, IpvsApi), for unit tests and benches. The contract suites
 * in native/test run against them and against the real kernel.
 */
export { MemoryConntrack, type MemoryConntrackEvent, type MemoryConntrackListener, type MemoryConntrackOptions } from './memory-conntrack.js';
export { MemoryConntrackEvents, STANDIN_EVENT_BYTES } from './memory-conntrack-events.js';
export { MemoryIpvs, KNOWN_SCHEDULERS, type IpvsHistoryEntry, type MemoryIpvsOptions } from './memory-ipvs.js';
