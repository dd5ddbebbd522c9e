/**
 * Directional zones on the kernel: the zones contract through netlink-native, and the
 * issue's reproduction with entries made by conntrack-tools (`conntrack -I --orig-zone 6`,
 * `--reply-zone 7`, `--zone 8`) deleted through the CLI: the table pass and `delete --entries`.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openNetlink } from 'netlink-native';
import { insertConntrackForTest } from 'netlink-native/testing';
import { addNetns, deleteAllNetns, deleteNetns, inNetns, isRoot, runCli } from './conntrack-netns.js';
import { conntrackZonesContract, ZONE_CLIENT, ZONE_KINDS, ZONE_SERVER, zonedSpecs } from './conntrack-zones-contract.js';

const skip = !isRoot() ? 'needs root (network namespaces)' : false;

/** The six entries made by conntrack-tools: 3 zone kinds x 2 families. */
function insertWithConntrackTools(ns: string): void {
  for (const f of ['v4', 'v6'] as const) {
    for (const k of ZONE_KINDS) {
      const zoneFlag = k.direction === 'original' ? '--orig-zone' : k.direction === 'reply' ? '--reply-zone' : '--zone';
      inNetns(ns, 'conntrack', ['-I', '-p', 'tcp', '-s', ZONE_CLIENT[f], '-d', ZONE_SERVER[f], '--sport', String(k.sport), '--dport', '80', '--state', 'ESTABLISHED', zoneFlag, String(k.zone), '-t', '600']);
    }
  }
}

function countIn(ns: string): number {
  return ['ipv4', 'ipv6'].reduce((n, f) => n + inNetns(ns, 'conntrack', ['-L', '-f', f]).split('\n').filter((l) => l.trim() !== '').length, 0);
}

describe('directional conntrack zones on the kernel', { skip }, () => {
  after(() => deleteAllNetns());

  conntrackZonesContract('kernel via netlink-native', () => {
    const ns = addNetns('z');
    const api = openNetlink({ netns: ns });
    return Promise.resolve({ api, fill: (specs) => insertConntrackForTest(api, specs), close: () => { api.close(); deleteNetns(ns); return Promise.resolve(); } });
  });

  it('the kernel keeps one zone per entry: an orig-zone and a different reply-zone together are refused', () => {
    const ns = addNetns('z');
    assert.throws(() => inNetns(ns, 'conntrack', ['-I', '-p', 'tcp', '-s', ZONE_CLIENT.v4, '-d', ZONE_SERVER.v4, '--sport', '2009', '--dport', '80', '--state', 'ESTABLISHED', '--orig-zone', '6', '--reply-zone', '7', '-t', '600']));
    deleteNetns(ns);
  });

  it('conntrack-tools entries: list --json carries origZone/replyZone, the CLI table pass deletes all six', () => {
    const ns = addNetns('z');
    insertWithConntrackTools(ns);
    assert.equal(countIn(ns), 6);
    const list = runCli(['list', '--netns', ns, '--json']);
    assert.equal(list.status, 0, list.stderr);
    const zones = (JSON.parse(list.stdout) as Array<{ zone: number; origZone: number; replyZone: number }>).map((e) => `${e.zone}/${e.origZone}/${e.replyZone}`).sort();
    assert.deepEqual(zones, ['6/6/0', '6/6/0', '7/0/7', '7/0/7', '8/8/8', '8/8/8']);
    const r = runCli(['delete', '--netns', ns, '--address', ZONE_CLIENT.v4, '--address', ZONE_CLIENT.v6, '--match', 'origSrc', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { deleted: number; alreadyGone: number; failed: number };
    assert.deepEqual([result.deleted, result.alreadyGone, result.failed], [6, 0, 0]);
    assert.equal(countIn(ns), 0);
    deleteNetns(ns);
  });

  it('conntrack-tools entries: delete --entries with what list --json printed deletes all six; a second run: already gone 6', () => {
    const ns = addNetns('z');
    insertWithConntrackTools(ns);
    const list = runCli(['list', '--netns', ns, '--json']);
    const file = join(tmpdir(), `cdct-zones-${process.pid}.json`);
    writeFileSync(file, list.stdout);
    try {
      const r = runCli(['delete', '--netns', ns, '--entries', file, '--json']);
      assert.equal(r.status, 0, r.stderr);
      const result = JSON.parse(r.stdout) as { deleted: number; alreadyGone: number; failed: number };
      assert.deepEqual([result.deleted, result.alreadyGone, result.failed], [6, 0, 0]);
      assert.equal(countIn(ns), 0);
      const again = runCli(['delete', '--netns', ns, '--entries', file, '--json']);
      const second = JSON.parse(again.stdout) as { deleted: number; alreadyGone: number; failed: number };
      assert.deepEqual([second.deleted, second.alreadyGone, second.failed], [0, 6, 0]);
    } finally {
      rmSync(file, { force: true });
      deleteNetns(ns);
    }
  });

  it('conntrack stale --delete deletes stale DNAT entries in every zone kind (IPv4 and IPv6)', async () => {
    const ns = addNetns('z');
    const api = openNetlink({ netns: ns });
    const endpoints = join(tmpdir(), `cdct-zones-eps-${process.pid}.yaml`);
    try {
      assert.equal((await insertConntrackForTest(api, zonedSpecs(true))).created, 6);
      // Only the API server's own slice (never empty in a cluster, and `stale --delete` refuses an empty inventory): nothing owns the DNAT targets, all six are stale.
      writeFileSync(endpoints, [
        'apiVersion: discovery.k8s.io/v1', 'kind: EndpointSlice', 'metadata: { name: kubernetes, namespace: default, labels: { kubernetes.io/service-name: kubernetes } }',
        'addressType: IPv4', 'ports: [{ name: https, port: 6443, protocol: TCP }]', 'endpoints: [{ addresses: [192.0.2.250] }]', '',
      ].join('\n'));
      const r = runCli(['stale', '--netns', ns, '--endpoints', endpoints, '--delete', '--json']);
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { delete: { requested: number; deleted: number; alreadyGone: number; failed: number; remaining: number } };
      assert.deepEqual([out.delete.requested, out.delete.deleted, out.delete.alreadyGone, out.delete.failed, out.delete.remaining], [6, 6, 0, 0, 0]);
      assert.equal(countIn(ns), 0);
    } finally {
      api.close();
      rmSync(endpoints, { force: true });
      deleteNetns(ns);
    }
  });
});
