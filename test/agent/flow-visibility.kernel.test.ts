/**
 * Flow visibility, detected in a real network namespace: one "node" with an interface named
 * like Cilium's (the veth pair `cilium_host`/`cilium_net`), one without. `conndrain doctor --netns` runs the
 * agent's probe inside each (`ip netns exec` mounts that namespace's sysfs, so
 * /sys/class/net lists its interfaces), and `flows.visibility` must tell them apart.
 * No Cilium runs here: the link name is the signal under test (its pinned maps are unit-tested).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { addNetns, deleteNetns, isRoot, REPO, sh } from './node-netns.js';

const suffix = `${process.pid}-${Math.floor(Math.random() * 1e6)}`;
const CILIUM = `cdfv-c-${suffix}`;
const PLAIN = `cdfv-p-${suffix}`;
const skip = isRoot() ? false : 'needs root (network namespaces)';

before(() => {
  if (skip !== false) return;
  addNetns(CILIUM);
  addNetns(PLAIN);
  // Cilium's own pair: cilium_host and cilium_net are the two ends of one veth.
  sh('ip', ['-n', CILIUM, 'link', 'add', 'cilium_host', 'type', 'veth', 'peer', 'name', 'cilium_net']);
  sh('ip', ['-n', PLAIN, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth1']);
});

after(() => {
  if (skip !== false) return;
  deleteNetns(CILIUM);
  deleteNetns(PLAIN);
});

interface Finding {
  check: string;
  value: string | number | null;
  problem: boolean;
  why: string;
}

function flowsFinding(netns: string): Finding | undefined {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'doctor', '--netns', netns, '--json', '--no-agent'], { cwd: REPO, encoding: 'utf8' });
  const out = JSON.parse(r.stdout) as { findings: Finding[] };
  return out.findings.find((f) => f.check === 'flows.visibility');
}

test('a namespace with Cilium\'s interfaces: open flows unknown (a problem, saying which link)', { skip }, () => {
  const f = flowsFinding(CILIUM);
  assert.equal(f?.value, 'unknown (eBPF datapath)');
  assert.equal(f?.problem, true);
  assert.match(f?.why ?? '', /link cilium_host, link cilium_net/);
  assert.match(f?.why ?? '', /lasts its maximum/);
});

test('a namespace without them: conntrack sees the flows', { skip }, () => {
  const f = flowsFinding(PLAIN);
  assert.equal(f?.value, 'conntrack');
  assert.equal(f?.problem, false);
});
