/**
 * `conntrack list --json` and `conntrack stale --json` print one line per entry: with a few
 * thousand entries in a node namespace (real kernel conntrack, root), their whole output
 * reaches a slow reader through a pipe and parses.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DnatNode } from '../stale/dnat-node.js';
import { sliceObject, writeInventory } from '../stale/inventory-file.js';
import { runCliIntoSlowReader } from './slow-pipe.js';

const node = new DnatNode(`cdpipe-${process.pid}-`, 247);
const dir = mkdtempSync(join(tmpdir(), 'cd-pipe-k-'));
const endpoints = join(dir, 'endpoints.json');
const GHOST = '10.247.0.7';
const FLOWS = 3000;
/** Ephemeral source ports repeat now and then, and a repeat is the same entry: most flows, not all. */
const ENTRIES = 2000;

before(() => {
  node.setup([{ protocol: 'udp', service: '10.96.0.12', servicePort: 53, target: GHOST, targetPort: 53 }], { 'net.netfilter.nf_conntrack_udp_timeout': '600' });
  node.sendUdp('10.96.0.12', 53, FLOWS);
  writeInventory(endpoints, [sliceObject('kube-system', 'kube-dns', [{ port: 53, protocol: 'UDP' }], [])]);
});

after(() => {
  node.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('conntrack list --json: every entry reaches a slow reader', async () => {
  const run = await runCliIntoSlowReader(['conntrack', 'list', '--json', '--netns', node.node]);
  assert.equal(run.code, 0, run.stderr);
  const entries = JSON.parse(run.text) as unknown[];
  assert.ok(entries.length >= ENTRIES, `${entries.length} entries in ${run.bytes} bytes`);
  assert.ok(run.bytes > 256 * 1024, `${run.bytes} bytes: more than a pipe buffer holds`);
});

test('conntrack stale --json: the whole report reaches a slow reader', async () => {
  const run = await runCliIntoSlowReader(['conntrack', 'stale', '--json', '--netns', node.node, '--endpoints', endpoints, '--node-name', 'node-a']);
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  const report = JSON.parse(run.text) as { groups: Array<{ entries: unknown[] }> };
  const entries = report.groups.reduce((n, g) => n + g.entries.length, 0);
  assert.ok(entries >= ENTRIES, `${entries} stale entries in ${run.bytes} bytes`);
  assert.ok(run.bytes > 64 * 1024, `${run.bytes} bytes: more than a pipe buffer holds`);
});
