import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MemoryIpvs } from 'netlink-native/memory';
import type { IpvsServiceKey } from 'netlink-native/types';
import { IpvsHold, type HeldServer, type RestoreAction } from './ipvs-hold.js';
import { loadState, StateWriter, writeStateAtomic, type AgentState } from '../runtime/state-file.js';

const logger = pino({ level: 'silent' });
const MH: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.0.10', port: 80 };
const FWM: IpvsServiceKey = { family: 4, fwmark: 42 };
const OTHER: IpvsServiceKey = { family: 4, protocol: 'udp', address: '10.96.0.53', port: 53 };
const POD = { uid: 'uid-web', key: 'shop/web', ips: ['10.2.0.1'] };

async function node(): Promise<MemoryIpvs> {
  const ipvs = new MemoryIpvs();
  await ipvs.addService({ key: MH, scheduler: 'mh', flags: 0 });
  await ipvs.addService({ key: FWM, scheduler: 'sh' });
  await ipvs.addService({ key: OTHER, scheduler: 'rr' });
  await ipvs.addDestination(MH, { address: '10.2.0.1', port: 8080, weight: 3, forwarding: 'tunnel', tunnelType: 'ipip', upperThreshold: 100, lowerThreshold: 10 });
  await ipvs.addDestination(MH, { address: '10.2.0.2', port: 8080, weight: 1, forwarding: 'tunnel' });
  await ipvs.addDestination(FWM, { address: '10.2.0.1', port: 0, weight: 1, forwarding: 'route' });
  await ipvs.addDestination(OTHER, { address: '10.2.0.9', port: 53, weight: 1 });
  ipvs.history.length = 0;
  return ipvs;
}

async function weights(ipvs: MemoryIpvs, key: IpvsServiceKey): Promise<Record<string, number>> {
  return Object.fromEntries((await ipvs.listDestinations(key)).map((d) => [`${d.address}:${d.port}`, d.weight]));
}

function rig(ipvs: MemoryIpvs): { hold: IpvsHold; restores: RestoreAction[]; changes: number[] } {
  const restores: RestoreAction[] = [];
  const changes: number[] = [];
  const hold = new IpvsHold({ ipvs, logger, hooks: { restored: (a) => restores.push(a), changed: () => changes.push(1) } });
  return { hold, restores, changes };
}

test('holds every server of the pod (address/port and fwmark) at weight 0 by editing, touching nothing else', async () => {
  const ipvs = await node();
  const { hold } = rig(ipvs);
  await hold.sync([POD], new Set());
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 0 });
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 0 });
  assert.deepEqual(await weights(ipvs, OTHER), { '10.2.0.9:53': 1 });
  assert.deepEqual(ipvs.history.map((h) => h.op), ['setDestinationWeight', 'setDestinationWeight'], 'edits only: never delete + re-add');
  const tunnel = (await ipvs.listDestinations(MH)).find((d) => d.address === '10.2.0.1');
  assert.equal(tunnel?.forwarding, 'tunnel', 'forwarding kept');
  assert.equal(tunnel?.upperThreshold, 100, 'thresholds kept');
  assert.equal(hold.size, 2);
  ipvs.history.length = 0;
  await hold.sync([POD], new Set());
  assert.deepEqual(ipvs.history, [], 'nothing to do when the hold is intact');
});

test('the proxy deletes a held server: re-added at its ORIGINAL weight, then edited to 0, counted as readd', async () => {
  const ipvs = await node();
  const { hold, restores } = rig(ipvs);
  await hold.sync([POD], new Set());
  ipvs.history.length = 0;
  ipvs.proxyDeleteDestination(MH, { address: '10.2.0.1', port: 8080 });
  await hold.sync([POD], new Set());
  assert.deepEqual(ipvs.history.map((h) => `${h.op}:${String(h.weight)}`), ['addDestination:3', 'setDestinationWeight:0']);
  const back = (await ipvs.listDestinations(MH)).find((d) => d.address === '10.2.0.1');
  assert.equal(back?.weight, 0);
  assert.equal(back?.forwarding, 'tunnel', 're-added with its forwarding method');
  assert.equal(back?.upperThreshold, 100);
  assert.deepEqual(restores, ['readd']);
  assert.equal(hold.list().find((h) => h.service.fwmark === undefined)?.recreated, true);
});

test('the proxy resets a weight: re-asserted to 0, counted as weight', async () => {
  const ipvs = await node();
  const { hold, restores } = rig(ipvs);
  await hold.sync([POD], new Set());
  ipvs.proxySetWeight(FWM, { address: '10.2.0.1', port: 0 }, 1);
  await hold.sync([POD], new Set());
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 0 });
  assert.deepEqual(restores, ['weight']);
});

test('pod gone: only servers the agent re-created are removed; the others stay as the proxy left them', async () => {
  const ipvs = await node();
  const { hold } = rig(ipvs);
  await hold.sync([POD], new Set());
  ipvs.proxyDeleteDestination(MH, { address: '10.2.0.1', port: 8080 });
  await hold.sync([POD], new Set()); // re-created
  ipvs.history.length = 0;
  await hold.sync([], new Set());
  assert.deepEqual(ipvs.history.map((h) => `${h.op}:${h.destination?.address ?? ''}`), ['deleteDestination:10.2.0.1']);
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1 });
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 0 }, 'not ours to delete: left at 0 for the proxy');
  assert.equal(hold.size, 0);
});

test('pod Ready again: original weights back where still 0, then hands off', async () => {
  const ipvs = await node();
  const { hold } = rig(ipvs);
  await hold.sync([POD], new Set());
  ipvs.proxySetWeight(FWM, { address: '10.2.0.1', port: 0 }, 5); // the proxy already changed this one
  await hold.sync([], new Set([POD.uid]));
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 3 });
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 5 });
  ipvs.history.length = 0;
  ipvs.proxySetWeight(MH, { address: '10.2.0.1', port: 8080 }, 7);
  await hold.sync([], new Set([POD.uid]));
  assert.deepEqual(ipvs.history, [], 'stopped interfering');
});

test('IPVS absent: sync rejects with EIPVSUNAVAILABLE only when something is to be held', async () => {
  const ipvs = new MemoryIpvs({ unavailable: true });
  const { hold } = rig(ipvs);
  await hold.sync([], new Set());
  await assert.rejects(hold.sync([POD], new Set()), (e: Error & { code?: string }) => e.code === 'EIPVSUNAVAILABLE');
});

let dir = '';
afterEach(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

test('restart mid-drain: the state file carries the holds; the new agent restores what the proxy did meanwhile', async () => {
  dir = mkdtempSync(join(tmpdir(), 'cd-hold-'));
  const path = join(dir, 'state.json');
  const ipvs = await node();
  const first = rig(ipvs);
  await first.hold.sync([POD], new Set());
  const writer = new StateWriter(path, (): AgentState => ({ version: 2, writtenAt: 'now', pods: [], holds: first.hold.list(), sessions: [] }), (e) => assert.fail(String(e)));
  await writer.save();
  // The agent is gone; the proxy deletes the server on this node and resets the fwmark one.
  ipvs.proxyDeleteDestination(MH, { address: '10.2.0.1', port: 8080 });
  ipvs.proxySetWeight(FWM, { address: '10.2.0.1', port: 0 }, 1);
  ipvs.history.length = 0;

  const loaded = await loadState(path, Date.now());
  assert.equal(loaded.kind, 'loaded');
  const second = rig(ipvs);
  second.hold.resume(loaded.kind === 'loaded' ? loaded.state.holds : []);
  await second.hold.sync([POD], new Set());
  assert.deepEqual(ipvs.history.map((h) => `${h.op}:${String(h.weight)}`).sort(), ['addDestination:3', 'setDestinationWeight:0', 'setDestinationWeight:0'], 're-added at the weight recorded before the restart');
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.1:8080': 0, '10.2.0.2:8080': 1 });
  assert.deepEqual(second.restores.sort(), ['readd', 'weight']);
  // And when the pod goes, the new agent removes the server it re-created.
  await second.hold.sync([], new Set());
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1 });
});

test('state file: atomic replace, corrupt file set aside', async () => {
  dir = mkdtempSync(join(tmpdir(), 'cd-state-'));
  const path = join(dir, 'sub', 'state.json');
  assert.deepEqual(await loadState(path, 1), { kind: 'missing' });
  await writeStateAtomic(path, { version: 2, writtenAt: 'a', pods: [], holds: [], sessions: [] });
  await writeStateAtomic(path, { version: 2, writtenAt: 'b', pods: [{ uid: 'u', key: 'ns/p', nodeName: 'n', ips: ['10.0.0.1'], state: 'draining', sinceMs: 1, wasReady: true, reason: 'deleting' }], holds: [], sessions: [] });
  const loaded = await loadState(path, 1);
  assert.equal(loaded.kind === 'loaded' ? loaded.state.pods[0]?.state : null, 'draining');
  writeFileSync(path, '{"version":1,"pods":[{"uid":1}]');
  const corrupt = await loadState(path, 7);
  assert.equal(corrupt.kind, 'corrupt');
  assert.equal(corrupt.kind === 'corrupt' ? corrupt.movedTo : null, `${path}.corrupt-7`);
  assert.match(readFileSync(`${path}.corrupt-7`, 'utf8'), /uid/);
});

test('index fast path: known servers are edited before the scan; one the proxy deleted as the drain began is re-added (original weight, then 0)', async () => {
  const ipvs = await node();
  const { hold, restores } = rig(ipvs);
  await hold.refreshIndex();
  assert.equal(ipvs.history.length, 0, 'an index refresh only reads');
  ipvs.proxyDeleteDestination(MH, { address: '10.2.0.1', port: 8080 }); // kube-router, racing the hold: no connection on this node
  await hold.sync([POD], new Set());
  assert.deepEqual(ipvs.history.map((h) => `${h.op}:${String(h.weight)}`).sort(), ['addDestination:3', 'setDestinationWeight:0', 'setDestinationWeight:0'], 'the fwmark server edited; the deleted one re-added at its original weight (3), edited to 0');
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.1:8080': 0, '10.2.0.2:8080': 1 });
  assert.equal(hold.size, 2);
  assert.deepEqual(restores, ['readd']);
});

test('a pod that drains again after Ready: its servers edited by the fast path, before any scan, and the original weight kept', async () => {
  const ipvs = await node();
  const { hold } = rig(ipvs);
  await hold.sync([POD], new Set()); // first drain
  await hold.sync([POD], new Set()); // the next interval's pass, still draining: its scan leaves weight 0 in the index
  await hold.sync([], new Set([POD.uid])); // Ready again: weights back (3 and 1)
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 3 });
  // The second drain: count the calls made before the first listServices (the full scan).
  ipvs.history.length = 0;
  const scanned = new Promise<number>((resolve) => {
    const list = ipvs.listServices.bind(ipvs);
    ipvs.listServices = () => {
      resolve(ipvs.history.filter((h) => h.op === 'setDestinationWeight' && h.weight === 0).length);
      return list();
    };
  });
  await hold.sync([POD], new Set());
  assert.equal(await scanned, 2, 'both known servers edited to 0 before the scan (the index said 0 from the first drain\'s second pass)');
  await hold.sync([], new Set([POD.uid]));
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 3 }, 'the original weight (3), not the default');
});

test('adopt: a weight only assumed here (first seen at 0) gives way to the original weight another instance saw; a seen one stays', async () => {
  const ipvs = await node();
  const older = rig(ipvs).hold;
  await older.sync([POD], new Set());
  const handed = older.list();
  assert.ok(handed.every((h) => h.originalAssumed === undefined), 'seen weights are not marked assumed');
  const newer = rig(ipvs).hold;
  await newer.sync([POD], new Set()); // finds the servers already at 0
  assert.ok(newer.list().every((h) => h.originalAssumed === true && h.originalWeight === 1));
  assert.equal(newer.adopt(handed), 2);
  assert.equal(newer.adopt(handed), 0, 'idempotent');
  const mh = newer.list().find((h) => h.service.fwmark === undefined);
  assert.equal(mh?.originalWeight, 3);
  assert.equal(mh?.originalAssumed, false);
  await newer.sync([], new Set([POD.uid])); // Ready again
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.1:8080': 3, '10.2.0.2:8080': 1 }, 'the original weight, not the default 1');
  const assumed = { ...handed[0], originalWeight: 1, originalAssumed: true } as (typeof handed)[0];
  const kept = rig(ipvs).hold;
  kept.resume(handed);
  assert.equal(kept.adopt([assumed]), 0, 'a seen weight is not replaced by an assumed one');
});

test('syncChanged asks for a scan at once for a Ready-once pod the index does not know, not for a pod that was never Ready (a rollout\'s new pods)', async () => {
  const ipvs = await node();
  const { hold } = rig(ipvs);
  await hold.refreshIndex();
  const unknownIp = { uid: 'uid-new', key: 'shop/new', ips: ['10.2.0.77'] };
  assert.equal(await hold.syncChanged([{ ...unknownIp, wasReady: false }], new Set()), 0, 'never Ready: the proxy has no server of it; the interval\'s pass suffices');
  assert.equal(await hold.syncChanged([{ ...unknownIp, wasReady: true }], new Set()), 1, 'was Ready: its servers may be newer than the index: scan now');
  assert.equal(await hold.syncChanged([{ ...POD, wasReady: false }], new Set()), 0);
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 0 }, 'a never-Ready pod the index knows is still held at once');
});

test('reassert scope held: reads only the services with held servers, and still puts back what the proxy reset or deleted there', async () => {
  const ipvs = await node();
  const { hold, restores } = rig(ipvs);
  await hold.sync([POD], new Set());
  const dumped: string[] = [];
  const listDestinations = ipvs.listDestinations.bind(ipvs);
  ipvs.listDestinations = (key) => {
    dumped.push(key.fwmark === undefined ? `${String(key.address)}:${String(key.port)}` : `fwmark ${String(key.fwmark)}`);
    return listDestinations(key);
  };
  ipvs.proxyDeleteDestination(MH, { address: '10.2.0.1', port: 8080 });
  await ipvs.setDestinationWeight(FWM, { address: '10.2.0.1', port: 0 }, 1);
  await hold.reassert(() => ({ draining: [POD], servingUids: new Set() }), 'held');
  assert.deepEqual(dumped.sort(), ['10.96.0.10:80', 'fwmark 42'], 'the service holding no server of a draining pod (udp 53) is not read');
  assert.deepEqual(await weights(ipvs, MH), { '10.2.0.2:8080': 1, '10.2.0.1:8080': 0 }, 're-added, then 0');
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 0 }, 'the reset weight is 0 again');
  assert.deepEqual(restores.sort(), ['readd', 'weight']);
  dumped.length = 0;
  await hold.reassert(() => ({ draining: [POD], servingUids: new Set() }), 'full');
  assert.equal(dumped.length, 3, 'a full pass reads every service');
});

test('a full pass compares the servers of held addresses too: a pod that drains again while the scan reads, its release having failed, gets its reset weight back to 0', async () => {
  const ipvs = await node();
  const { hold, restores } = rig(ipvs);
  await hold.sync([POD], new Set());
  // Ready again, but the release's edit back to the original weight fails: the hold stays.
  const setDestinationWeight = ipvs.setDestinationWeight.bind(ipvs);
  ipvs.setDestinationWeight = () => Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' }));
  await hold.sync([], new Set([POD.uid]));
  ipvs.setDestinationWeight = setDestinationWeight;
  assert.equal(hold.size, 2, 'the failed release kept its holds');
  ipvs.proxySetWeight(FWM, { address: '10.2.0.1', port: 0 }, 1);
  // The scan begins while only another pod drains; the pod drains again before the pass edits.
  const other = { uid: 'uid-dns', key: 'kube-system/dns', ips: ['10.2.0.9'] };
  let calls = 0;
  await hold.reassert(() => ({ draining: (calls += 1) <= 2 ? [other] : [other, POD], servingUids: new Set() }), 'full');
  assert.ok(calls >= 3);
  assert.deepEqual(await weights(ipvs, FWM), { '10.2.0.1:0': 0 }, 'the reset weight is 0 again in this pass');
  assert.deepEqual(restores, ['weight']);
});

test('a hold records its service\'s server order only where a twin can use it (mh, sh), one list per service and scan', async () => {
  const ipvs = await node();
  await ipvs.addDestination(MH, { address: '10.2.0.3', port: 8080, weight: 1 });
  await ipvs.addDestination(OTHER, { address: '10.2.0.3', port: 53, weight: 1 });
  const { hold } = rig(ipvs);
  await hold.refreshIndex();
  const second = { uid: 'uid-web-2', key: 'shop/web-2', ips: ['10.2.0.3'] };
  await hold.sync([POD, second], new Set());
  const byKey = (uid: string, service: IpvsServiceKey): HeldServer | undefined => hold.list().find((h) => h.podUid === uid && h.service.port === service.port && h.service.fwmark === service.fwmark);
  const mhFirst = byKey(POD.uid, MH);
  const mhSecond = byKey(second.uid, MH);
  assert.deepEqual(mhFirst?.serviceOrder, ['10.2.0.3:8080', '10.2.0.2:8080', '10.2.0.1:8080'], 'the dump order (newest first)');
  assert.equal(mhFirst?.serviceOrder, mhSecond?.serviceOrder, 'two holds of one service from one scan share its list');
  assert.deepEqual(byKey(POD.uid, FWM)?.serviceOrder, ['10.2.0.1:0'], 'sh');
  const rr = byKey(second.uid, OTHER);
  assert.ok(rr !== undefined, 'the rr service\'s server is held');
  assert.equal(rr.serviceOrder, undefined, 'an rr service has no twin: no order recorded');
});
