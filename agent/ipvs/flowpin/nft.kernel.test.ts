/**
 * conndrain's nftables table on the host kernel (root, a network namespace of its own):
 * every golden batch is accepted by the real nft/kernel and reads back to the same registry,
 * a replace is atomic and complete, removal leaves nothing, and real TCP traffic shows the
 * split: the pin rule marks the flow's packets without SYN and never a SYN.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { pino } from 'pino';
import { MemoryIpvs } from 'netlink-native/memory';
import { DEFAULT_FWMARK_RANGE, parseFwmarkRange } from '../../../src/flowpin/fwmark-range.js';
import { buildRuleset, parsePinCounters, parseRegistry, type NftBatch } from '../../../src/flowpin/nft-ruleset.js';
import { planFlowpin } from '../../../src/flowpin/twin-plan.js';
import { SCENARIOS } from '../../../src/flowpin/fixtures/scenarios.js';
import { cleanupFlowpin } from './cleanup.js';
import { createNft } from './nft.js';

const root = typeof process.getuid === 'function' && process.getuid() === 0;
const hasNft = spawnSync('sh', ['-c', 'command -v nft && command -v ip']).status === 0;
const skip = !root ? 'needs root (network namespaces, nftables)' : !hasNft ? 'nft or ip not installed' : false;
const NS = `cdfp-${process.pid}`;
const nft = createNft({ prefix: ['ip', 'netns', 'exec', NS] });
const parsed = parseFwmarkRange(DEFAULT_FWMARK_RANGE);
if (!parsed.ok) throw new Error(parsed.error);
const range = parsed.value;

before(() => {
  if (skip !== false) return;
  execFileSync('ip', ['netns', 'add', NS]);
  execFileSync('ip', ['-n', NS, 'link', 'set', 'lo', 'up']);
  execFileSync('ip', ['-n', NS, 'addr', 'add', '10.96.100.1/32', 'dev', 'lo']);
});
after(() => {
  if (skip !== false) return;
  spawnSync('ip', ['netns', 'del', NS]);
});

test('every golden batch is accepted by nft and the kernel, and reads back to the same registry', { skip }, async () => {
  for (const [name, input] of Object.entries(SCENARIOS)) {
    const plan = planFlowpin(input);
    await nft.apply(buildRuleset(plan.twins));
    const listing = await nft.listTable();
    assert.deepEqual(parseRegistry(listing), plan.twins.map((t) => ({ original: t.original, fwmark: t.fwmark })), name);
    assert.deepEqual([...parsePinCounters(listing).keys()].sort(), plan.twins.filter((t) => t.state === 'active').map((t) => t.fwmark).sort(), name);
    const chain = (listing as { nftables: { chain?: { name: string; hook?: string; prio?: number; type?: string } }[] }).nftables.find((i) => i.chain?.name === 'prerouting')?.chain;
    assert.deepEqual([chain?.type, chain?.hook, chain?.prio], ['filter', 'prerouting', -140], name);
  }
  // A replace with no twin removes the table entirely; removing again is not an error.
  await nft.apply(buildRuleset([]));
  assert.equal(await nft.listTable(), undefined);
  await nft.apply(buildRuleset([]));
});

test('cleanup removes the real table (IPVS stand-in: the host kernel has no IPVS)', { skip }, async () => {
  const plan = planFlowpin(SCENARIOS['dsr-mh-one-draining-pod']!);
  await nft.apply(buildRuleset(plan.twins));
  const report = await cleanupFlowpin({ ipvs: new MemoryIpvs(), nft, range, logger: pino({ level: 'silent' }) });
  assert.equal(report.tableRemoved, true);
  assert.equal(await nft.listTable(), undefined);
  assert.equal(JSON.stringify(JSON.parse(execFileSync('ip', ['netns', 'exec', NS, 'nft', '-j', 'list', 'ruleset'], { encoding: 'utf8' }))).includes('conndrain'), false);
});

const OBSERVE = (mark: number): NftBatch => ({
  nftables: [
    { add: { table: { family: 'inet', name: 'cdfpobserve' } } },
    { add: { chain: { family: 'inet', table: 'cdfpobserve', name: 'pre', type: 'filter', hook: 'prerouting', prio: -130, policy: 'accept' } } },
    ...[
      { comment: 'syn-marked', syn: 'syn', mark: true },
      { comment: 'syn-all', syn: 'syn', mark: false },
      { comment: 'marked', syn: undefined, mark: true },
    ].map((r) => ({
      add: {
        rule: {
          family: 'inet', table: 'cdfpobserve', chain: 'pre', comment: r.comment,
          expr: [
            { match: { op: '==', left: { payload: { protocol: 'ip', field: 'daddr' } }, right: '10.96.100.1' } },
            { match: { op: '==', left: { payload: { protocol: 'tcp', field: 'dport' } }, right: 80 } },
            ...(r.syn !== undefined ? [{ match: { op: '==', left: { '&': [{ payload: { protocol: 'tcp', field: 'flags' } }, 'syn'] }, right: 'syn' } }] : []),
            ...(r.mark ? [{ match: { op: '==', left: { meta: { key: 'mark' } }, right: mark } }] : []),
            { counter: { packets: 0, bytes: 0 } },
          ],
        },
      },
    })),
  ],
});

function observed(): Record<string, number> {
  const listing = JSON.parse(execFileSync('ip', ['netns', 'exec', NS, 'nft', '-j', 'list', 'table', 'inet', 'cdfpobserve'], { encoding: 'utf8' })) as { nftables: { rule?: { comment?: string; expr: { counter?: { packets: number } }[] } }[] };
  const out: Record<string, number> = {};
  for (const item of listing.nftables) if (item.rule?.comment !== undefined) out[item.rule.comment] = item.rule.expr.find((e) => e.counter !== undefined)?.counter?.packets ?? -1;
  return out;
}

test('real TCP: the flow\'s packets without SYN get the twin mark, its SYN does not', { skip }, async () => {
  const plan = planFlowpin(SCENARIOS['dsr-mh-one-draining-pod']!);
  const mark = plan.twins[0]!.fwmark;
  await nft.apply(buildRuleset(plan.twins));
  await nft.apply(OBSERVE(mark));
  const script = `
    const net = require('node:net');
    const server = net.createServer((s) => s.on('data', (d) => { s.end(d); }));
    server.listen(80, '10.96.100.1', () => {
      const c = net.connect({ host: '10.96.100.1', port: 80 }, () => c.write('hello conndrain'));
      c.on('data', () => { c.end(); server.close(); });
    });`;
  execFileSync('ip', ['netns', 'exec', NS, process.execPath, '-e', script], { timeout: 10_000 });
  const counts = observed();
  assert.equal(counts['syn-all'], 1, JSON.stringify(counts));
  assert.equal(counts['syn-marked'], 0, `a SYN got the twin mark: ${JSON.stringify(counts)}`);
  assert.ok((counts.marked ?? 0) >= 3, `ACK, data and FIN should carry the twin mark: ${JSON.stringify(counts)}`);
  assert.equal(parsePinCounters(await nft.listTable()).get(mark), counts.marked, 'the pin rule\'s own counter agrees');
});
