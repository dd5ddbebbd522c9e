/**
 * The host kernel of these machines (6.18) has no IPVS at all, which is exactly the "ip_vs not
 * loaded" case: the generic netlink family lookup fails and every IPVS call must reject with
 * EIPVSUNAVAILABLE and the readable message. Skips on a kernel that does have IPVS (there the
 * lookup loads ip_vs through its net-pf-16-proto-16-family-IPVS alias).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openNetlink, NetlinkError } from 'netlink-native';

test('IPVS absent from the kernel: every IPVS call rejects with EIPVSUNAVAILABLE', async (t) => {
  const netlink = openNetlink();
  try {
    let services: unknown;
    try {
      services = await netlink.listServices();
    } catch (error) {
      assert.ok(error instanceof NetlinkError, String(error));
      assert.equal(error.code, 'EIPVSUNAVAILABLE');
      assert.equal(error.op, 'listServices');
      assert.equal(error.message, 'listServices: IPVS is not available (is the ip_vs module loaded?)');
    }
    if (services !== undefined) {
      t.skip('this kernel has IPVS (covered inside the VM instead)');
      return;
    }
    const key = { family: 4 as const, protocol: 'tcp' as const, address: '10.96.0.10', port: 80 };
    const dest = { address: '10.244.1.5', port: 8080 };
    for (const call of [
      () => netlink.listDestinations(key),
      () => netlink.setDestinationWeight(key, dest, 0),
      () => netlink.addDestination(key, { ...dest, weight: 1 }),
      () => netlink.deleteDestination(key, dest),
      () => netlink.addService({ key, scheduler: 'rr' }),
      () => netlink.deleteService(key),
    ]) {
      await assert.rejects(call(), { code: 'EIPVSUNAVAILABLE' });
    }
    // Argument checks still come first: a bad key is EINVAL even without IPVS.
    await assert.rejects(netlink.listDestinations({ ...key, address: 'nope' }), { code: 'EINVAL' });
  } finally {
    netlink.close();
  }
});

test('conndrain ipvs list without IPVS: exit 1 and the readable message', async (t) => {
  const netlink = openNetlink();
  const available = await netlink.listServices().then(() => true, () => false);
  netlink.close();
  if (available) {
    t.skip('this kernel has IPVS');
    return;
  }
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'ipvs', 'list'], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname });
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stderr.trim(), 'conndrain ipvs list: listServices: IPVS is not available (is the ip_vs module loaded?)');
});
