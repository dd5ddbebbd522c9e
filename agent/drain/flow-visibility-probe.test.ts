import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeFlowVisibility, readDatapathSignals } from './flow-visibility-probe.js';

const root = mkdtempSync(join(tmpdir(), 'cd-fv-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A fake sysfs: class/net/<link> directories and fs/bpf/tc/globals/<pin> files. */
function fakeSys(name: string, links: string[], pins: string[] | undefined): string {
  const sys = join(root, name);
  for (const l of links) mkdirSync(join(sys, 'class', 'net', l), { recursive: true });
  if (pins !== undefined) {
    mkdirSync(join(sys, 'fs', 'bpf', 'tc', 'globals'), { recursive: true });
    for (const p of pins) writeFileSync(join(sys, 'fs', 'bpf', 'tc', 'globals', p), '');
  }
  return sys;
}

test('reads link names and pinned maps under the given sysfs root', async () => {
  const sysRoot = fakeSys('cilium', ['lo', 'eth0', 'cilium_host', 'cilium_net'], ['cilium_lb4_services_v2', 'cilium_ct4_global']);
  const signals = await readDatapathSignals({ sysRoot });
  assert.deepEqual([...(signals?.links ?? [])].sort(), ['cilium_host', 'cilium_net', 'eth0', 'lo']);
  assert.deepEqual([...(signals?.bpfPins ?? [])].sort(), ['cilium_ct4_global', 'cilium_lb4_services_v2']);
  const v = await probeFlowVisibility('auto', { sysRoot });
  assert.equal(v.visible, false);
  assert.match(v.reason, /cilium_lb4_services_v2/);
});

test('no BPF filesystem mounted is no signal, not an error; a plain node keeps conntrack', async () => {
  const sysRoot = fakeSys('plain', ['lo', 'eth0', 'kube-ipvs0'], undefined);
  assert.deepEqual((await readDatapathSignals({ sysRoot }))?.bpfPins, []);
  assert.equal((await probeFlowVisibility('auto', { sysRoot })).visible, true);
});

test('unreadable interfaces: no signals (undefined), the verdict says it assumed conntrack', async () => {
  assert.equal(await readDatapathSignals({ sysRoot: join(root, 'missing') }), undefined);
  const v = await probeFlowVisibility('auto', { listLinks: () => Promise.reject(new Error('EACCES')) });
  assert.equal(v.visible, true);
  assert.match(v.reason, /could not read/);
});

test('the flag modes do not probe', async () => {
  let probed = false;
  const listLinks = (): Promise<string[]> => {
    probed = true;
    return Promise.resolve(['cilium_host']);
  };
  assert.equal((await probeFlowVisibility('none', { listLinks })).visible, false);
  assert.equal((await probeFlowVisibility('conntrack', { listLinks })).visible, true);
  assert.equal(probed, false);
});
