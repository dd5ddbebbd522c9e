/** The conntrack contract against the in-memory stand-in (see conntrack-contract.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryConntrack } from 'netlink-native/memory';
import { conntrackContract, POD } from './conntrack-contract.js';

conntrackContract('in-memory stand-in', () => {
  const table = new MemoryConntrack({ cpus: 2 });
  return Promise.resolve({ api: table, fill: (specs) => table.insertConntrackForTest(specs), close: () => Promise.resolve() });
});

it('stand-in: refuses a clashing tuple and forgets expired entries', async () => {
  const table = new MemoryConntrack();
  const entry = table.insertEntry({ family: 4, protocolNumber: 17, original: { src: '10.0.0.1', dst: POD.v4, srcPort: 1, dstPort: 53 }, reply: { src: POD.v4, dst: '10.0.0.1', srcPort: 53, dstPort: 1 }, timeout: 30, mark: 0, zone: 0, status: 0 });
  assert.throws(() => table.insertEntry({ ...entry, original: { ...entry.original, srcPort: 2 } }), /exists/, 'the reply tuple clashes');
  assert.ok(table.expire(entry.id));
  assert.deepEqual((await table.deleteConntrack({ addresses: [POD.v4], match: ['replySrc'] })).matched, 0);
});
