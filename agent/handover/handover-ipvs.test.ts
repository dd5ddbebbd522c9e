/**
 * IPVS while two agent instances overlap on a node (docs/handover.md), in-process: the API
 * server stand-in, one in-memory IPVS shared by both agents, one state file. A server whose
 * original weight is 7 is held at 0 while its pod drains; the newer agent's first look at it
 * finds 0 (the older one edited it); the older one gets SIGTERM; the pod turns Ready again.
 * The server must end at 7, restored once, by one instance, never bounced to 1, nor to 0
 * after the restore.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { MemoryConntrack, MemoryIpvs } from 'netlink-native/memory';
import type { IpvsApi, IpvsServiceKey } from 'netlink-native/types';
import { managedPod, setReady } from '../../test/apiserver/pods.js';
import { AgentRig, memoryNetlink, until } from '../../test/agent/agent-rig.js';
import { forwardIpvs } from '../../bench/agent/stand-ins.js';
import type { Agent } from '../agent.js';
import type { AgentState } from '../runtime/state-file.js';

const rig = new AgentRig('cd-handover-ipvs');
const server = rig.server;
before(() => rig.start());
after(() => rig.stop());

const SERVICE: IpvsServiceKey = { family: 4, protocol: 'tcp', address: '10.96.7.7', port: 80 };

async function tableWith(podIp: string): Promise<MemoryIpvs> {
  const ipvs = new MemoryIpvs();
  await ipvs.addService({ key: SERVICE, scheduler: 'mh' });
  await ipvs.addDestination(SERVICE, { address: '10.5.9.9', port: 8080, weight: 1 });
  await ipvs.addDestination(SERVICE, { address: podIp, port: 8080, weight: 7 });
  return ipvs;
}

async function weightOf(ipvs: MemoryIpvs, ip: string): Promise<number | undefined> {
  return (await ipvs.listDestinations(SERVICE)).find((d) => d.address === ip)?.weight;
}

/** The weights the agents set on `ip`, in order. */
function editsOf(ipvs: MemoryIpvs, ip: string): number[] {
  return ipvs.history.filter((h) => h.op === 'setDestinationWeight' && h.destination?.address === ip).map((h) => h.weight ?? NaN);
}

/**
 * The newer agent's IPVS reads wait until `ip` is at weight 0 (at most 2 s): its first look at
 * the server comes after the older agent's edit, as on a node where the older one was quicker.
 */
function slowReads(ipvs: MemoryIpvs, ip: string): IpvsApi {
  const api = forwardIpvs(ipvs);
  const zeroOrLate = async (): Promise<void> => {
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline && (await weightOf(ipvs, ip)) !== 0) await new Promise((r) => setTimeout(r, 10));
  };
  return {
    ...api,
    listServices: async () => {
      await zeroOrLate();
      return api.listServices();
    },
    listDestinations: async (s) => {
      await zeroOrLate();
      return api.listDestinations(s);
    },
  };
}

function ownerOf(path: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as AgentState).owner?.instance;
  } catch {
    return undefined;
  }
}

function agentOn(node: string, stateFile: string, ipvs: IpvsApi): Promise<Agent> {
  return rig.makeAgent(node, memoryNetlink(new MemoryConntrack(), ipvs), { stateFile, flags: { conntrackEvents: 'false', flowPinning: 'false', janitor: 'false' } });
}

function assertRestoredOnce(ipvs: MemoryIpvs, ip: string, edits: number[]): void {
  const restores = edits.filter((w) => w > 0);
  assert.deepEqual(restores, [7], `restored once, to the original weight 7 (edits: ${edits.join(', ')})`);
  assert.equal(edits.at(-1), 7, `nothing after the restore (edits: ${edits.join(', ')})`);
  assert.ok(!edits.includes(1), 'never set to the default weight 1');
}

test('a drain that begins while both agents run: the newer edits IPVS alone and restores the original weight 7 once', async () => {
  const ip = '10.6.7.1';
  const path = rig.path('overlap-ipvs.json');
  const ipvs = await tableWith(ip);
  server.putPod(managedPod({ name: 'w7', nodeName: 'node-w', ips: [ip] }));
  const older = await agentOn('node-w', path, ipvs);
  const newer = await agentOn('node-w', path, slowReads(ipvs, ip));
  try {
    await older.start();
    await until('older ready', () => older.readiness().ready);
    await until('the older one wrote the state file', () => ownerOf(path) === older.instance.instance);
    await newer.start();
    await until('newer ready', () => newer.readiness().ready);
    await new Promise((r) => setTimeout(r, 300)); // the handover link settles
    ipvs.history.length = 0;
    server.modifyPod('shop', 'w7', (p) => setReady(p, false));
    await until('held at 0', async () => (await weightOf(ipvs, ip)) === 0, 10_000);
    await new Promise((r) => setTimeout(r, 2500)); // both agents' hold passes (the newer one's reads are slow)
    await older.handOver();
    server.modifyPod('shop', 'w7', (p) => setReady(p, true));
    await until('restored', async () => ((await weightOf(ipvs, ip)) ?? 0) > 0, 10_000);
    await new Promise((r) => setTimeout(r, 500)); // later passes would show a bounce
    assert.equal(await weightOf(ipvs, ip), 7);
    assertRestoredOnce(ipvs, ip, editsOf(ipvs, ip));
  } finally {
    await older.stop();
    await newer.stop();
  }
});

test('a drain held by the older agent when the newer starts (its hold not yet in the state file): the newer gets it over the link and restores 7 once', async () => {
  const ip = '10.6.7.2';
  const path = rig.path('before-ipvs.json');
  const ipvs = await tableWith(ip);
  server.putPod(managedPod({ name: 'w8', nodeName: 'node-v', ips: [ip] }));
  const older = await agentOn('node-v', path, ipvs);
  let newer: Agent | undefined;
  try {
    await older.start();
    await until('older ready', () => older.readiness().ready);
    server.modifyPod('shop', 'w8', (p) => setReady(p, false));
    await until('held at 0', async () => (await weightOf(ipvs, ip)) === 0);
    const read = (): AgentState => JSON.parse(readFileSync(path, 'utf8')) as AgentState;
    await until('the hold is in the file', () => {
      try {
        return read().holds.length === 1;
      } catch {
        return false; // not written yet
      }
    });
    // The newer one reads the file as it was just before the older one's write of the hold landed.
    writeFileSync(path, JSON.stringify({ ...read(), holds: [] }));
    newer = await agentOn('node-v', path, ipvs);
    await newer.start();
    await until('newer ready', () => newer?.readiness().ready === true);
    await until('the newer one edits IPVS', () => newer?.ownsIpvs === true);
    await older.handOver();
    await new Promise((r) => setTimeout(r, 300)); // hold passes of the newer one alone
    server.modifyPod('shop', 'w8', (p) => setReady(p, true));
    await until('restored', async () => ((await weightOf(ipvs, ip)) ?? 0) > 0);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await weightOf(ipvs, ip), 7);
    assertRestoredOnce(ipvs, ip, editsOf(ipvs, ip));
  } finally {
    await older.stop();
    await newer?.stop();
  }
});
