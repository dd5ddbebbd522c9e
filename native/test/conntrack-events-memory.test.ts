/** The event-index contract against the in-memory stand-in (see conntrack-events-contract.ts). */
import { MemoryConntrack } from 'netlink-native/memory';
import { conntrackEventsContract } from './conntrack-events-contract.js';

conntrackEventsContract('in-memory stand-in', () => {
  const table = new MemoryConntrack();
  return Promise.resolve({ api: table, fill: (specs) => table.insertConntrackForTest(specs), close: () => Promise.resolve() });
});
