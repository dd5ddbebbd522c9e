import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeIpvsContract } from './ipvs-contract.js';
import { MemoryIpvs } from 'netlink-native/memory';
import { NetlinkError, type IpvsServiceKey } from 'netlink-native/types';

describeIpvsContract('in-memory stand-in', async () => Promise.resolve({ api: new MemoryIpvs(), cleanup: async () => {} }));

const svc: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };
const dest = { address: '10.244.1.5', port: 8080 };

test('stand-in: the proxy simulations change state behind the API, and history records API changes only', async () => {
  const ipvs = new MemoryIpvs();
  await ipvs.addService({ key: svc, scheduler: 'mh' });
  await ipvs.addDestination(svc, { ...dest, weight: 1, forwarding: 'tunnel' });
  await ipvs.setDestinationWeight(svc, dest, 0);
  ipvs.proxySetWeight(svc, dest, 1);
  assert.equal((await ipvs.listDestinations(svc))[0]?.weight, 1);
  ipvs.setConnections(svc, dest, { active: 3, inactive: 2 });
  const [listed] = await ipvs.listDestinations(svc);
  assert.deepEqual([listed?.activeConnections, listed?.inactiveConnections, listed?.forwarding], [3, 2, 'tunnel']);
  ipvs.proxyDeleteDestination(svc, dest);
  assert.deepEqual(await ipvs.listDestinations(svc), []);
  assert.deepEqual(ipvs.history.map((h) => h.op), ['addService', 'addDestination', 'setDestinationWeight']);
});

test('stand-in: unavailable IPVS rejects every call with EIPVSUNAVAILABLE', async () => {
  const ipvs = new MemoryIpvs({ unavailable: true });
  await assert.rejects(ipvs.listServices(), (error: unknown) => {
    assert.ok(error instanceof NetlinkError);
    assert.equal(error.code, 'EIPVSUNAVAILABLE');
    assert.equal(error.message, 'listServices: IPVS is not available (is the ip_vs module loaded?)');
    return true;
  });
  await assert.rejects(ipvs.setDestinationWeight(svc, dest, 0), { code: 'EIPVSUNAVAILABLE' });
});
