/** `conndrain conntrack list|delete|stats --netns` against the kernel, checked with `conntrack -L`. */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openNetlink } from 'netlink-native';
import { fixture, POD } from './conntrack-contract.js';
import { addNetns, conntrackCliKeys, deleteAllNetns, isRoot, runCli } from './conntrack-netns.js';
import { insertConntrackForTest } from 'netlink-native/testing';

describe('conndrain conntrack CLI on the kernel', { skip: !isRoot() ? 'needs root' : false }, () => {
  let ns = '';

  before(async () => {
    ns = addNetns('cli');
    const api = openNetlink({ netns: ns });
    try {
      assert.equal((await insertConntrackForTest(api, fixture())).created, 50);
    } finally {
      api.close();
    }
  });

  after(() => deleteAllNetns());

  it('stats and list read the namespace', () => {
    const stats = runCli(['stats', '--netns', ns, '--json']);
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { count: number }).count, 50);
    const list = runCli(['list', '--netns', ns, '--address', POD.v4, '--match', 'replySrc', '--protocol', 'tcp', '--json']);
    assert.equal(list.status, 0, list.stderr);
    const entries = JSON.parse(list.stdout) as { reply: { src: string }; protocol: string }[];
    assert.equal(entries.length, 6);
    assert.ok(entries.every((e) => e.reply.src === POD.v4 && e.protocol === 'tcp'));
    const text = runCli(['list', '--netns', ns, '--zone', '5']);
    assert.equal(text.stdout.trim().split('\n').length, 4);
    assert.match(text.stdout, /zone=5/);
  });

  it('delete --dry-run changes nothing; delete removes the pod\'s entries (default match replySrc,origDst)', () => {
    const before = conntrackCliKeys(ns).length;
    const dry = runCli(['delete', '--netns', ns, '--address', `${POD.v4},${POD.v6}`, '--dry-run']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /would delete 20 of 20 matching entries/);
    assert.equal(conntrackCliKeys(ns).length, before);
    const real = runCli(['delete', '--netns', ns, '--address', POD.v4, '--address', POD.v6, '--json']);
    assert.equal(real.status, 0, real.stderr);
    const result = JSON.parse(real.stdout) as { deleted: number; failed: number };
    assert.deepEqual([result.deleted, result.failed], [20, 0]);
    assert.equal(conntrackCliKeys(ns).length, before - 20);
  });

  it('delete --entries removes exactly the listed entries (what list --json printed), by tuple', () => {
    const list = runCli(['list', '--netns', ns, '--protocol', 'udp', '--json']);
    assert.equal(list.status, 0, list.stderr);
    const all = JSON.parse(list.stdout) as Array<{ id: number }>;
    assert.ok(all.length >= 2);
    const file = join(tmpdir(), `janitor-entries-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(all.slice(0, 1)));
    try {
      const before = conntrackCliKeys(ns).length;
      const r = runCli(['delete', '--netns', ns, '--entries', file, '--json']);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual((JSON.parse(r.stdout) as { deleted: number; byProtocol: unknown }).byProtocol, { udp: { deleted: 1, alreadyGone: 0, failed: 0 } });
      assert.equal(conntrackCliKeys(ns).length, before - 1);
      const again = runCli(['delete', '--netns', ns, '--entries', file]);
      assert.match(again.stdout, /deleted 0 of 1 listed entries \(already gone 1, failed 0\)/);
      const mixed = runCli(['delete', '--netns', ns, '--entries', file, '--address', POD.v4]);
      assert.equal(mixed.status, 2);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('a missing namespace is a clear error (exit 1)', () => {
    const r = runCli(['stats', '--netns', 'cdct-no-such-ns']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /network namespace 'cdct-no-such-ns' does not exist/);
  });
});
