/**
 * A scan reads every IPVS service. Dumps that answer at once (the in-memory stand-in; a cached
 * answer) must not chain 2,000 reads into one task: the event loop turns between batches, so a
 * watch event that arrives during a scan is handled before the scan ends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryIpvs } from 'netlink-native/memory';
import { visitServers } from './ipvs-scan.js';

test('a scan of many services lets the event loop turn while it reads them', async () => {
  const ipvs = new MemoryIpvs();
  for (let i = 0; i < 200; i++) await ipvs.addService({ key: { family: 4, protocol: 'tcp', address: `10.96.${i >> 8}.${i & 255}`, port: 80 }, scheduler: 'rr' });
  let reads = 0;
  const listDestinations = ipvs.listDestinations.bind(ipvs);
  ipvs.listDestinations = (key) => {
    reads += 1;
    return listDestinations(key);
  };
  let readsWhenTheLoopTurned: number | undefined;
  setImmediate(() => (readsWhenTheLoopTurned = reads));
  let visited = 0;
  await visitServers(ipvs, await ipvs.listServices(), 8, () => (visited += 1));
  assert.equal(visited, 200);
  assert.ok(readsWhenTheLoopTurned !== undefined && readsWhenTheLoopTurned < 200, `the loop turned after ${String(readsWhenTheLoopTurned)} of 200 reads`);
});
