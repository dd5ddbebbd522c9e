import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DoctorReadings } from './doctor/index.js';
import { judgeFlowVisibility, resolveFlowVisibility } from './flow-visibility.js';

test('no eBPF datapath signal: conntrack sees the flows', () => {
  const v = judgeFlowVisibility({ links: ['lo', 'eth0', 'cni0', 'flannel.1', 'veth1234', 'kube-ipvs0'], bpfPins: [] });
  assert.equal(v.visible, true);
  assert.deepEqual(v.signals, []);
});

test('Cilium kube-proxy replacement (pinned service maps): flows unknown, naming what was found', () => {
  const v = judgeFlowVisibility({ links: ['lo', 'cilium_host', 'cilium_net', 'lxc12ab'], bpfPins: ['cilium_lb4_services_v2', 'cilium_lb4_backends_v3', 'cilium_ct4_global'] });
  assert.equal(v.visible, false);
  assert.deepEqual(v.signals, ['link cilium_host', 'link cilium_net', 'bpf pin tc/globals/cilium_lb4_services_v2']);
  assert.match(v.reason, /eBPF service load balancer/);
  assert.match(v.reason, /--flow-visibility=conntrack/);
});

test('Cilium links without a visible BPF filesystem, or Calico eBPF: flows unknown (the safe side)', () => {
  assert.equal(judgeFlowVisibility({ links: ['cilium_host'], bpfPins: [] }).visible, false);
  assert.equal(judgeFlowVisibility({ links: ['bpfin.cali', 'bpfout.cali'], bpfPins: [] }).visible, false);
  assert.equal(judgeFlowVisibility({ links: ['eth0'], bpfPins: ['cali_v4_nat_fe3'] }).visible, false);
});

test('--flow-visibility overrides the probe both ways; an unreadable node keeps conntrack', () => {
  const blind = { links: ['cilium_host'], bpfPins: [] };
  assert.equal(resolveFlowVisibility('conntrack', blind).visible, true);
  assert.equal(resolveFlowVisibility('conntrack', blind).source, 'flag');
  assert.equal(resolveFlowVisibility('none', { links: ['eth0'], bpfPins: [] }).visible, false);
  assert.equal(resolveFlowVisibility('auto', blind).visible, false);
  assert.equal(resolveFlowVisibility('auto', undefined).visible, true);
});

test('doctor: flows.visibility is a finding (a problem where flows cannot be seen)', () => {
  const base: DoctorReadings = { conntrackCount: 1, conntrackMax: 100, cpus: [], netfilter: {}, ipvs: undefined, kernelRelease: '6.8.0', agent: undefined, stale: undefined };
  const find = (r: DoctorReadings) => diagnose(r).find((f) => f.check === 'flows.visibility');
  assert.deepEqual([find(base)?.value, find(base)?.problem], [null, false]);
  const seen = find({ ...base, flowVisibility: judgeFlowVisibility({ links: ['eth0'], bpfPins: [] }) });
  assert.deepEqual([seen?.value, seen?.problem], ['conntrack', false]);
  const blind = find({ ...base, flowVisibility: judgeFlowVisibility({ links: ['cilium_host'], bpfPins: ['cilium_lb4_services_v2'] }) });
  assert.deepEqual([blind?.value, blind?.problem], ['unknown (eBPF datapath)', true]);
  assert.match(blind?.why ?? '', /lasts its maximum/);
});
