import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { MemoryIpvs } from 'netlink-native/memory';
import { loadAgentCleanupConfig, loadAgentConfig } from '../../../src/config/agent.js';
import { createAgentFlowpin, flowpinSkip } from './wire.js';
import { MemoryNft } from './memory-nft.js';

const logger = pino({ level: 'silent' });

function config(flags: Record<string, unknown> = {}, env: Record<string, string> = {}): ReturnType<typeof loadAgentConfig> {
  return loadAgentConfig({ flags: { nodeName: 'node-1', ...flags }, env });
}

test('agent config: flow pinning on by default with the documented range; bad ranges are clear errors naming the flag', () => {
  const loaded = config();
  assert.ok(loaded.ok);
  assert.equal(loaded.value.flowPinning, true);
  assert.equal(loaded.value.cleanup, false);
  assert.deepEqual([loaded.value.fwmarkRange.first, loaded.value.fwmarkRange.last], [0x0c000000, 0x0cffffff]);
  const off = config({ flowPinning: 'false', fwmarkRange: '1000-1999' });
  assert.ok(off.ok && !off.value.flowPinning && off.value.fwmarkRange.first === 1000);
  const fromEnv = config({}, { CONNDRAIN_FWMARK_RANGE: '0x7f000000/0xff000000' });
  assert.ok(fromEnv.ok && fromEnv.value.fwmarkRange.first === 0x7f000000);
  const bad = config({ fwmarkRange: '0x0c000001/0xff000000', drainPort: 0 });
  assert.equal(bad.ok, false);
  if (!bad.ok) {
    assert.ok(bad.error.some((p) => p.startsWith('--fwmark-range') && /bits outside mask/.test(p)), bad.error.join('\n'));
    assert.ok(bad.error.some((p) => p.includes('--drain-port')), 'every problem at once');
  }
  const cleanup = loadAgentCleanupConfig({ flags: { cleanup: true }, env: {} });
  assert.ok(cleanup.ok && cleanup.value.cleanup, 'cleanup needs no node name');
});

test('wiring: off by flag, off with the hold off, off on the IPVS stand-in without an nft stand-in; twins are never held', () => {
  const loaded = config();
  assert.ok(loaded.ok);
  const ipvs = new MemoryIpvs();
  const base = { ipvs, logger, held: () => [] };
  assert.equal(createAgentFlowpin({ ...base, config: { ...loaded.value, flowPinning: false } }), undefined);
  assert.equal(createAgentFlowpin({ ...base, config: { ...loaded.value, ipvsHold: false } }), undefined);
  assert.equal(createAgentFlowpin({ ...base, config: loaded.value }), undefined, 'never the host\'s real nftables from a unit test');
  assert.notEqual(createAgentFlowpin({ ...base, config: loaded.value, nft: new MemoryNft() }), undefined);
  const skip = flowpinSkip(loaded.value);
  assert.equal(skip({ family: 4, fwmark: 0x0c000003 }), true);
  assert.equal(skip({ family: 4, fwmark: 0x4abc }), false);
  assert.equal(skip({ family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80 }), false);
});
