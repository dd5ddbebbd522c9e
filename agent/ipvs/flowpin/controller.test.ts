import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { MemoryIpvs } from 'netlink-native/memory';
import type { IpvsServiceKey } from 'netlink-native/types';
import { DEFAULT_FWMARK_RANGE, inRange, parseFwmarkRange } from '../../../src/flowpin/fwmark-range.js';
import { parseRegistry } from '../../../src/flowpin/nft-ruleset.js';
import { IpvsHold, type HeldServer } from '../ipvs-hold.js';
import { cleanupFlowpin } from './cleanup.js';
import { FlowpinController } from './controller.js';
import { MemoryNft } from './memory-nft.js';

const logger = pino({ level: 'silent' });
const parsed = parseFwmarkRange(DEFAULT_FWMARK_RANGE);
if (!parsed.ok) throw new Error(parsed.error);
const range = parsed.value;
const VIP: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.100.1', port: 80 };
const PODS = ['10.244.1.11', '10.244.1.12', '10.244.2.11', '10.244.3.11'];
const DRAINING = { uid: 'uid-2-1', key: 'shop/pod-2-1', ips: ['10.244.2.11'] };
const TWIN: IpvsServiceKey = { family: 4, fwmark: range.first };

async function node(): Promise<MemoryIpvs> {
  const ipvs = new MemoryIpvs();
  await ipvs.addService({ key: VIP, scheduler: 'mh', flags: 0x08 | 0x10 });
  for (const ip of PODS) await ipvs.addDestination(VIP, { address: ip, port: 80, weight: 1, forwarding: 'tunnel', tunnelType: 'ipip' });
  await ipvs.addService({ key: { family: 4, protocol: 'tcp', address: '10.96.100.2', port: 80 }, scheduler: 'rr' });
  await ipvs.addDestination({ family: 4, protocol: 'tcp', address: '10.96.100.2', port: 80 }, { address: '10.244.2.11', port: 80, weight: 1 });
  return ipvs;
}

function rig(ipvs: MemoryIpvs, nft = new MemoryNft(), registry?: Registry): { hold: IpvsHold; flowpin: FlowpinController; nft: MemoryNft } {
  const hold = new IpvsHold({ ipvs, logger, skipService: (key) => key.fwmark !== undefined && inRange(range, key.fwmark) });
  const flowpin = new FlowpinController({ ipvs, nft, range, logger, held: () => hold.list(), readSloppyTcp: () => Promise.resolve(1), registry });
  return { hold, flowpin, nft };
}

async function order(ipvs: MemoryIpvs, key: IpvsServiceKey): Promise<string[]> {
  return (await ipvs.listDestinations(key)).map((d) => `${d.address}@${d.weight}`);
}

test('a held mh service gets a twin: same scheduler and flags, servers in the same list order, the draining pod at its original weight', async () => {
  const ipvs = await node();
  const registry = new Registry();
  const { hold, flowpin, nft } = rig(ipvs, new MemoryNft(), registry);
  await hold.sync([DRAINING], new Set());
  const report = await flowpin.sync();
  assert.deepEqual(report.plan.skipped.map((s) => s.reason), ['scheduler'], 'the rr service is not pinned');
  const services = await ipvs.listServices();
  const twin = services.find((s) => s.key.fwmark === range.first);
  assert.ok(twin, 'twin exists');
  assert.equal(twin.scheduler, 'mh');
  assert.equal(twin.flags & 0x18, 0x18, 'mh-fallback,mh-port kept');
  const original = await order(ipvs, VIP);
  assert.deepEqual(original.find((d) => d.startsWith('10.244.2.11')), '10.244.2.11@0', 'the hold keeps the original at 0');
  assert.deepEqual((await order(ipvs, TWIN)), original.map((d) => d.replace(/@0$/, '@1')), 'same order, draining pod back at weight 1');
  const registered = parseRegistry(await nft.listTable());
  assert.deepEqual(registered, [{ original: VIP, fwmark: range.first }]);
  assert.match(await registry.metrics(), /conndrain_flowpin_twins\{state="active"\} 1/);

  // The hold never touches the twin (it would undo the pinning).
  await hold.sync([DRAINING], new Set());
  assert.equal((await ipvs.listDestinations(TWIN)).find((d) => d.address === '10.244.2.11')?.weight, 1);
  // A steady pass changes nothing: no new nft batch, no IPVS call.
  const batches = nft.batches.length;
  const changes = ipvs.history.length;
  await flowpin.sync();
  assert.equal(nft.batches.length, batches, 'table not replaced when it already matches');
  assert.equal(ipvs.history.length, changes);
});

test('re-asserted on the interval: a deleted twin or table comes back, a changed weight is restored', async () => {
  const ipvs = await node();
  const { hold, flowpin, nft } = rig(ipvs);
  await hold.sync([DRAINING], new Set());
  await flowpin.sync();
  await ipvs.setDestinationWeight(TWIN, { address: '10.244.2.11', port: 80 }, 0);
  await flowpin.sync();
  assert.equal((await ipvs.listDestinations(TWIN)).find((d) => d.address === '10.244.2.11')?.weight, 1);
  await ipvs.deleteService(TWIN);
  await nft.apply({ nftables: [{ delete: { table: { family: 'inet', name: 'conndrain' } } }] });
  assert.equal(nft.present, false);
  await flowpin.sync();
  assert.equal(nft.present, true, 'table back');
  assert.deepEqual(await order(ipvs, TWIN), (await order(ipvs, VIP)).map((d) => d.replace(/@0$/, '@1')));
});

test('pod gone: the proxy removes its server, the twin carries no connection -> twin and table removed in one sync', async () => {
  const ipvs = await node();
  const { hold, flowpin, nft } = rig(ipvs);
  await hold.sync([DRAINING], new Set());
  await flowpin.sync();
  ipvs.proxyDeleteDestination(VIP, { address: '10.244.2.11', port: 80 });
  await hold.sync([], new Set());
  const report = await flowpin.sync();
  assert.equal(report.deleted, 1);
  assert.equal((await ipvs.listServices()).some((s) => s.key.fwmark !== undefined), false, 'no twin left');
  assert.equal(nft.present, false, 'no conndrain table left');
});

test('pod Ready again while the twin carries connections: pin rule gone at once, twin kept until its connections end', async () => {
  const ipvs = await node();
  const { hold, flowpin, nft } = rig(ipvs);
  await hold.sync([DRAINING], new Set());
  await flowpin.sync();
  ipvs.setConnections(TWIN, { address: '10.244.3.11', port: 80 }, { active: 1 });
  await hold.sync([], new Set([DRAINING.uid]));
  const retiring = await flowpin.sync();
  assert.deepEqual(retiring.plan.twins.map((t) => t.state), ['retiring']);
  const listing = (await nft.listTable()) as { nftables: { rule?: { chain: string } }[] };
  assert.equal(listing.nftables.filter((i) => i.rule?.chain === 'prerouting').length, 0, 'no packet is sent to the twin any more');
  assert.ok((await ipvs.listServices()).some((s) => s.key.fwmark === range.first), 'twin kept for its connection');
  ipvs.setConnections(TWIN, { address: '10.244.3.11', port: 80 }, { active: 0 });
  await flowpin.sync();
  assert.equal((await ipvs.listServices()).some((s) => s.key.fwmark !== undefined), false);
  assert.equal(nft.present, false);
});

test('agent restart: a new controller finds its twin in the registry and keeps its mark (no re-create)', async () => {
  const ipvs = await node();
  const first = rig(ipvs);
  await first.hold.sync([DRAINING], new Set());
  await first.flowpin.sync();
  const held: HeldServer[] = first.hold.list();
  // A foreign fwmark service takes the range's next mark meanwhile.
  await ipvs.addService({ key: { family: 4, fwmark: range.first + 1 }, scheduler: 'rr' });
  ipvs.history.length = 0;
  const second = rig(ipvs, first.nft);
  second.hold.resume(held);
  await second.hold.sync([DRAINING], new Set());
  const report = await second.flowpin.sync();
  assert.deepEqual(report.plan.twins.map((t) => t.fwmark), [range.first]);
  assert.deepEqual(report.plan.foreign, [range.first + 1]);
  assert.equal(ipvs.history.filter((h) => h.op === 'addService' || h.op === 'deleteService').length, 0);
});

test('conndrain agent --cleanup: every twin (registered or in the range) and the table are removed; the proxy\'s services stay', async () => {
  const ipvs = await node();
  const { hold, flowpin, nft } = rig(ipvs);
  await hold.sync([DRAINING], new Set());
  await flowpin.sync();
  await ipvs.addService({ key: { family: 4, fwmark: range.first + 9 }, scheduler: 'mh' }); // an orphan in the range
  await ipvs.addService({ key: { family: 4, fwmark: 0x4abc }, scheduler: 'mh' }); // a proxy's fwmark service
  const report = await cleanupFlowpin({ ipvs, nft, range, logger });
  assert.deepEqual(report.twinsDeleted, [range.first, range.first + 9]);
  assert.equal(nft.present, false);
  const left = (await ipvs.listServices()).map((s) => s.key.fwmark ?? s.key.address);
  assert.deepEqual(left.sort(), [0x4abc, '10.96.100.1', '10.96.100.2'].sort());
  const again = await cleanupFlowpin({ ipvs, nft, range, logger });
  assert.deepEqual(again, { twinsDeleted: [], tableRemoved: false, ipvsAvailable: true }, 'idempotent');
});

test('IPVS absent: cleanup still removes the table and says so', async () => {
  const nft = new MemoryNft();
  await nft.apply({ nftables: [{ add: { table: { family: 'inet', name: 'conndrain' } } }] });
  const report = await cleanupFlowpin({ ipvs: new MemoryIpvs({ unavailable: true }), nft, range, logger });
  assert.deepEqual(report, { twinsDeleted: [], tableRemoved: true, ipvsAvailable: false });
});

test('the twin keeps the pre-drain order when the proxy deletes the held server (the hold re-adds it at the head of the original)', async () => {
  const ipvs = await node();
  const before = await order(ipvs, VIP);
  const { hold, flowpin } = rig(ipvs);
  await hold.sync([DRAINING], new Set()); // held at 0: the hold records the list order
  await ipvs.deleteDestination(VIP, { address: '10.244.2.11', port: 80 }); // kube-router: no connection on this node
  await flowpin.sync(); // before the hold re-adds it: the twin has it anyway, in its place
  assert.deepEqual(await order(ipvs, TWIN), before, 'twin = the pre-drain list, draining pod at its original weight');
  await hold.sync([DRAINING], new Set()); // re-added at weight 1 (head), edited to 0
  assert.equal((await order(ipvs, VIP))[0], '10.244.2.11@0', 'the original has it at the head now');
  await flowpin.sync();
  assert.deepEqual(await order(ipvs, TWIN), before, 'the twin still follows the pre-drain order');
});

test('an idle twin whose order drifted (servers added at different times) is rebuilt in the planned order', async () => {
  const ipvs = await node();
  const before = await order(ipvs, VIP);
  const { hold, flowpin } = rig(ipvs);
  await hold.sync([DRAINING], new Set());
  await flowpin.sync();
  await ipvs.deleteDestination(TWIN, { address: '10.244.1.11', port: 80 });
  await ipvs.addDestination(TWIN, { address: '10.244.1.11', port: 80, weight: 1, forwarding: 'tunnel', tunnelType: 'ipip' });
  assert.notDeepEqual(await order(ipvs, TWIN), before);
  await flowpin.sync();
  assert.deepEqual(await order(ipvs, TWIN), before, 'rebuilt');
});

/** nftables whose table reads wait until released: a pass in flight for as long as the test wants. */
class SlowNft extends MemoryNft {
  reads = 0;
  private gates: Array<() => void> = [];

  override async listTable(): Promise<unknown> {
    this.reads += 1;
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return super.listTable();
  }

  /** Lets every read waiting now go on. */
  release(): void {
    for (const open of this.gates.splice(0)) open();
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), 'timed out');
}

test('nft slower than the passes asked for: the calls made meanwhile share one pass (the queue does not grow)', async () => {
  const ipvs = await node();
  const nft = new SlowNft();
  const { hold, flowpin } = rig(ipvs, nft);
  await hold.sync([DRAINING], new Set());
  const first = flowpin.sync();
  await until(() => nft.reads === 1);
  const later = Array.from({ length: 20 }, () => flowpin.sync()); // every hold pass and interval asks
  nft.release();
  await first;
  await until(() => nft.reads === 2);
  nft.release();
  await Promise.all(later);
  assert.equal(nft.reads, 2, 'one pass for the 20 calls made while the first ran');
});

test('stop() waits for the pass in flight only: passes asked meanwhile do not run after it', async () => {
  const ipvs = await node();
  const nft = new SlowNft();
  const { hold, flowpin } = rig(ipvs, nft);
  await hold.sync([DRAINING], new Set());
  const passes = [flowpin.sync(), flowpin.sync(), flowpin.sync()];
  await until(() => nft.reads === 1);
  const stopped = flowpin.stop();
  nft.release();
  await stopped;
  await Promise.all(passes);
  assert.equal(nft.reads, 1, 'the waiting pass did nothing once stopped');
});
