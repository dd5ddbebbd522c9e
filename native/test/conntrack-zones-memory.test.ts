/** The zones contract against the in-memory stand-in (see conntrack-zones-contract.ts). */
import { MemoryConntrack } from 'netlink-native/memory';
import { conntrackZonesContract } from './conntrack-zones-contract.js';

conntrackZonesContract('in-memory stand-in', () => {
  const table = new MemoryConntrack();
  return Promise.resolve({ api: table, fill: (specs) => table.insertConntrackForTest(specs), close: () => Promise.resolve() });
});
