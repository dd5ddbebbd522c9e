/**
 * The IPVS contract: one suite, run against the in-memory stand-in on the host
 * (ipvs-memory.test.ts) and against the real kernel inside the QEMU guest (ipvs.guest.ts),
 * so the stand-in the agent's unit tests use cannot drift from the kernel.
 * The factory must hand out an IpvsApi with no services; `cleanup` runs after each test.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NetlinkError, type IpvsApi, type IpvsDestination, type IpvsService, type IpvsServiceKey } from 'netlink-native/types';
import { sameServiceKey } from 'netlink-native';

export interface IpvsContractTarget {
  api: IpvsApi;
  cleanup(): Promise<void>;
}

const tcp80: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };
const udp6: IpvsServiceKey = { family: 6, protocol: 'udp', address: 'fd00:96::a', port: 53 };
const mark42: IpvsServiceKey = { family: 4, fwmark: 42 };
const mark7v6: IpvsServiceKey = { family: 6, fwmark: 7 };
const missing: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.99', port: 8443 };

async function rejectsWith(promise: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof NetlinkError, `expected a NetlinkError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message !== undefined) assert.match(error.message, message);
    return true;
  });
}

function byAddress(dests: IpvsDestination[], address: string): IpvsDestination {
  const found = dests.find((d) => d.address === address);
  assert.ok(found, `destination ${address} not in ${dests.map((d) => d.address).join(', ')}`);
  return found;
}

export function describeIpvsContract(name: string, createTarget: () => Promise<IpvsContractTarget>): void {
  describe(`IPVS contract: ${name}`, () => {
    let target: IpvsContractTarget;
    let api: IpvsApi;
    beforeEach(async () => {
      target = await createTarget();
      api = target.api;
    });
    afterEach(async () => {
      await target.cleanup();
    });

    test('starts empty, lists address/port and fwmark services of both families', async () => {
      assert.deepEqual(await api.listServices(), []);
      await api.addService({ key: tcp80, scheduler: 'mh', flags: 0x08 });
      await api.addService({ key: { family: 6, protocol: 'udp', address: 'FD00:96:0::A', port: 53 }, scheduler: 'rr' });
      await api.addService({ key: mark42, scheduler: 'wrr', flags: 0x01, timeout: 300, netmask: 0xffffff00 });
      await api.addService({ key: mark7v6, scheduler: 'sh', netmask: 64 });
      const services = await api.listServices();
      assert.equal(services.length, 4);
      const find = (key: IpvsServiceKey): IpvsService => {
        const found = services.find((s) => sameServiceKey(s.key, key));
        assert.ok(found, `service ${JSON.stringify(key)} missing from ${JSON.stringify(services)}`);
        return found;
      };
      const web = find(tcp80);
      assert.deepEqual(web.key, tcp80);
      assert.equal(web.scheduler, 'mh');
      assert.ok(web.flagNames.includes('sched-flag-1') && web.flagNames.includes('hashed'), web.flagNames.join(','));
      assert.equal(web.netmask, 0xffffffff);
      assert.equal(web.timeout, 0);
      const dns = find(udp6);
      assert.deepEqual(dns.key, udp6, 'IPv6 address in the kernel spelling');
      assert.equal(dns.netmask, 128);
      const marked = find(mark42);
      assert.deepEqual(marked.key, mark42);
      assert.equal(marked.scheduler, 'wrr');
      assert.equal(marked.timeout, 300);
      assert.equal(marked.netmask, 0xffffff00);
      assert.deepEqual(marked.flagNames, ['persistent', 'hashed']);
      assert.equal(marked.flags, 0x03);
      const marked6 = find(mark7v6);
      assert.deepEqual(marked6.key, mark7v6);
      assert.equal(marked6.netmask, 64);
    });

    test('lists destinations with forwarding, weight, thresholds, tunnel fields and counters', async () => {
      await api.addService({ key: tcp80, scheduler: 'rr' });
      await api.addService({ key: mark7v6, scheduler: 'wrr' });
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 1 });
      await api.addDestination(tcp80, { address: '10.244.2.6', port: 8080, weight: 3, forwarding: 'tunnel', tunnelType: 'gue', tunnelPort: 6080, tunnelFlags: 1, upperThreshold: 100, lowerThreshold: 10 });
      await api.addDestination(tcp80, { address: 'fd00:244::7', port: 80, weight: 2, forwarding: 'tunnel', tunnelType: 'ipip' });
      await api.addDestination(tcp80, { address: '10.244.3.7', port: 80, weight: 4, forwarding: 'route' });
      await api.addDestination(mark7v6, { address: 'FD00:244:0::8', port: 0, weight: 5, forwarding: 'route' });
      const dests = await api.listDestinations(tcp80);
      assert.equal(dests.length, 4);
      assert.deepEqual(byAddress(dests, '10.244.1.5'), {
        address: '10.244.1.5', port: 8080, family: 4, forwarding: 'masq', weight: 1, upperThreshold: 0, lowerThreshold: 0,
        tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0,
      });
      const gue = byAddress(dests, '10.244.2.6');
      assert.deepEqual([gue.forwarding, gue.weight, gue.tunnelType, gue.tunnelPort, gue.tunnelFlags, gue.upperThreshold, gue.lowerThreshold], ['tunnel', 3, 'gue', 6080, 1, 100, 10]);
      const mixed = byAddress(dests, 'fd00:244::7');
      assert.deepEqual([mixed.family, mixed.forwarding, mixed.port], [6, 'tunnel', 80], 'an IPv6 tunnel destination in an IPv4 service');
      assert.equal(byAddress(dests, '10.244.3.7').forwarding, 'route');
      const marked = await api.listDestinations(mark7v6);
      assert.equal(marked.length, 1);
      assert.deepEqual([marked[0]?.address, marked[0]?.family, marked[0]?.forwarding, marked[0]?.weight], ['fd00:244::8', 6, 'route', 5]);
    });

    test('a weight edit keeps forwarding, thresholds and tunnel fields, and touches no other destination', async () => {
      await api.addService({ key: tcp80, scheduler: 'mh' });
      await api.addDestination(tcp80, { address: '10.244.2.6', port: 8080, weight: 1, forwarding: 'tunnel', tunnelType: 'gue', tunnelPort: 6080, tunnelFlags: 1, upperThreshold: 100, lowerThreshold: 10 });
      await api.addDestination(tcp80, { address: '10.244.2.9', port: 8080, weight: 1, forwarding: 'tunnel', tunnelType: 'gre', tunnelFlags: 2 });
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 7 });
      const before = await api.listDestinations(tcp80);
      await api.setDestinationWeight(tcp80, { address: '10.244.2.6', port: 8080 }, 0);
      await api.setDestinationWeight(tcp80, { address: '10.244.2.9', port: 8080, family: 4 }, 0);
      const after = await api.listDestinations(tcp80);
      for (const address of ['10.244.2.6', '10.244.2.9']) {
        assert.deepEqual(byAddress(after, address), { ...byAddress(before, address), weight: 0 }, `${address}: only the weight changed`);
      }
      assert.deepEqual(byAddress(after, '10.244.1.5'), byAddress(before, '10.244.1.5'));
      await api.setDestinationWeight(tcp80, { address: '10.244.2.6', port: 8080 }, 5);
      assert.deepEqual(byAddress(await api.listDestinations(tcp80), '10.244.2.6'), { ...byAddress(before, '10.244.2.6'), weight: 5 });
    });

    test('many weight edits in one call: each keeps its fields, a missing server or service is reported for that edit only', async () => {
      await api.addService({ key: tcp80, scheduler: 'mh' });
      await api.addService({ key: mark42, scheduler: 'rr' });
      await api.addDestination(tcp80, { address: '10.244.2.6', port: 8080, weight: 3, forwarding: 'tunnel', tunnelType: 'gue', tunnelPort: 6080, upperThreshold: 100, lowerThreshold: 10 });
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 7 });
      await api.addDestination(mark42, { address: '10.244.9.9', port: 0, weight: 1, forwarding: 'route' });
      const before = await api.listDestinations(tcp80);
      const results = await api.setDestinationWeights([
        { service: tcp80, destination: { address: '10.244.2.6', port: 8080 }, weight: 0 },
        { service: tcp80, destination: { address: '10.244.7.7', port: 8080 }, weight: 0 },
        { service: udp6, destination: { address: 'fd00:244::5', port: 5353 }, weight: 0 },
        { service: mark42, destination: { address: '10.244.9.9', port: 0 }, weight: 0 },
      ]);
      assert.deepEqual(results.map((r) => r?.code), [undefined, 'ENOENT', 'ESRCH', undefined], 'done, no such destination, no such service, done');
      assert.ok(results[1] instanceof NetlinkError && results[1].message.includes('10.244.7.7'), 'the error names the destination');
      const after = await api.listDestinations(tcp80);
      assert.deepEqual(byAddress(after, '10.244.2.6'), { ...byAddress(before, '10.244.2.6'), weight: 0 }, 'only the weight changed');
      assert.deepEqual(byAddress(after, '10.244.1.5'), byAddress(before, '10.244.1.5'), 'untouched');
      assert.equal(byAddress(await api.listDestinations(mark42), '10.244.9.9').weight, 0);
      assert.deepEqual(await api.setDestinationWeights([]), []);
      await assert.rejects(api.setDestinationWeights([{ service: tcp80, destination: { address: '10.244.1.5', port: 8080 }, weight: -1 }]), (e: unknown) => e instanceof NetlinkError && e.code === 'EINVAL', 'a bad edit rejects the call');
      assert.equal(byAddress(await api.listDestinations(tcp80), '10.244.1.5').weight, 7, 'and nothing was edited');
    });

    test('weight edits on IPv6 and fwmark services', async () => {
      await api.addService({ key: udp6, scheduler: 'rr' });
      await api.addService({ key: mark42, scheduler: 'rr' });
      await api.addDestination(udp6, { address: 'fd00:244::5', port: 5353, weight: 2, upperThreshold: 9 });
      await api.addDestination(mark42, { address: '10.244.9.9', port: 0, weight: 1, forwarding: 'route' });
      await api.setDestinationWeight(udp6, { address: 'FD00:244::5', port: 5353 }, 0);
      await api.setDestinationWeight(mark42, { address: '10.244.9.9', port: 0 }, 0);
      const v6 = byAddress(await api.listDestinations(udp6), 'fd00:244::5');
      assert.deepEqual([v6.weight, v6.upperThreshold, v6.forwarding], [0, 9, 'masq']);
      const marked = byAddress(await api.listDestinations(mark42), '10.244.9.9');
      assert.deepEqual([marked.weight, marked.forwarding], [0, 'route']);
    });

    test('deleting a destination keeps the others; deleting a service removes it', async () => {
      await api.addService({ key: tcp80, scheduler: 'rr' });
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 1 });
      await api.addDestination(tcp80, { address: '10.244.1.6', port: 8080, weight: 1 });
      await api.deleteDestination(tcp80, { address: '10.244.1.5', port: 8080 });
      assert.deepEqual((await api.listDestinations(tcp80)).map((d) => d.address), ['10.244.1.6']);
      await api.deleteService(tcp80);
      assert.deepEqual(await api.listServices(), []);
      await rejectsWith(api.listDestinations(tcp80), 'ESRCH');
    });

    test('missing service: ESRCH on every operation, with the service in the message', async () => {
      const dest = { address: '10.244.1.5', port: 8080 };
      await rejectsWith(api.listDestinations(missing), 'ESRCH', /no such virtual service tcp:10\.96\.0\.99:8443/);
      await rejectsWith(api.setDestinationWeight(missing, dest, 0), 'ESRCH', /tcp:10\.96\.0\.99:8443/);
      await rejectsWith(api.addDestination(missing, { ...dest, weight: 1 }), 'ESRCH');
      await rejectsWith(api.deleteDestination(missing, dest), 'ESRCH');
      await rejectsWith(api.deleteService(missing), 'ESRCH');
      await rejectsWith(api.listDestinations({ family: 4, fwmark: 999 }), 'ESRCH', /fwmark:999/);
    });

    test('missing destination: ENOENT, and nothing else changes', async () => {
      await api.addService({ key: tcp80, scheduler: 'rr' });
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 4 });
      await rejectsWith(api.setDestinationWeight(tcp80, { address: '10.244.1.6', port: 8080 }, 0), 'ENOENT', /no such destination 10\.244\.1\.6:8080 in service tcp:10\.96\.0\.10:80/);
      await rejectsWith(api.setDestinationWeight(tcp80, { address: '10.244.1.5', port: 9090 }, 0), 'ENOENT');
      await rejectsWith(api.deleteDestination(tcp80, { address: '10.244.1.6', port: 8080 }), 'ENOENT');
      assert.deepEqual((await api.listDestinations(tcp80)).map((d) => [d.address, d.weight]), [['10.244.1.5', 4]]);
    });

    test('duplicates, unknown schedulers and kernel-side validation', async () => {
      await api.addService({ key: tcp80, scheduler: 'rr' });
      await rejectsWith(api.addService({ key: tcp80, scheduler: 'rr' }), 'EEXIST', /already exists/);
      await rejectsWith(api.addService({ key: { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 81 }, scheduler: 'nosuchsched' }), 'ENOENT', /unknown scheduler 'nosuchsched'/);
      await api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 1 });
      await rejectsWith(api.addDestination(tcp80, { address: '10.244.1.5', port: 8080, weight: 2 }), 'EEXIST', /10\.244\.1\.5:8080 already exists/);
      await rejectsWith(api.addDestination(tcp80, { address: 'fd00::1', port: 80, weight: 1 }), 'EINVAL', /IPv6 masq destination in an IPv4 service|invalid/);
      await rejectsWith(api.addDestination(tcp80, { address: '10.244.1.7', port: 80, weight: 1, forwarding: 'tunnel', tunnelType: 'gue' }), 'EINVAL');
      await rejectsWith(api.addDestination(tcp80, { address: '10.244.1.8', port: 80, weight: 1, upperThreshold: 5, lowerThreshold: 6 }), 'ERANGE');
      assert.deepEqual((await api.listDestinations(tcp80)).map((d) => d.address), ['10.244.1.5']);
    });

    test('bad arguments are rejected with EINVAL before reaching the kernel', async () => {
      await rejectsWith(api.listDestinations({ family: 4, protocol: 'tcp', address: 'not-an-ip', port: 80 }), 'EINVAL', /not an IPv4 address/);
      await rejectsWith(api.listDestinations({ family: 4, protocol: 'tcp', address: 'fd00::1', port: 80 }), 'EINVAL');
      await rejectsWith(api.listDestinations({ family: 4, protocol: 'icmp' as 'tcp', address: '10.0.0.1', port: 80 }), 'EINVAL');
      await rejectsWith(api.listDestinations({ family: 4, protocol: 'tcp', address: '10.0.0.1', port: 70000 }), 'EINVAL');
      await rejectsWith(api.listDestinations({ family: 4, fwmark: 0 }), 'EINVAL');
      await rejectsWith(api.setDestinationWeight(tcp80, { address: '10.244.1.5', port: 8080 }, -1), 'EINVAL', /weight/);
      await rejectsWith(api.setDestinationWeight(tcp80, { address: '10.244.1.5', port: 8080 }, 1.5), 'EINVAL', /weight/);
      await rejectsWith(api.addService({ key: tcp80, scheduler: '' }), 'EINVAL');
      await rejectsWith(api.addService({ key: udp6, scheduler: 'rr', netmask: 129 }), 'EINVAL');
    });
  });
}
