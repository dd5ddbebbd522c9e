import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDeleteTable, buildRuleset, parsePinCounters, parseRegistry, NFT_PREROUTING_PRIORITY } from './nft-ruleset.js';
import { formatServiceKey } from 'netlink-native/ipvs-keys';
import { planFlowpin } from './twin-plan.js';
import { SCENARIOS } from './fixtures/scenarios.js';

test('ruleset: one transaction that replaces the table; no twin -> the table is removed', () => {
  const plan = planFlowpin(SCENARIOS['dsr-mh-one-draining-pod']!);
  const batch = buildRuleset(plan.twins).nftables;
  assert.deepEqual(batch.slice(1, 4), [{ add: { table: { family: 'inet', name: 'conndrain' } } }, { delete: { table: { family: 'inet', name: 'conndrain' } } }, { add: { table: { family: 'inet', name: 'conndrain' } } }]);
  assert.equal(NFT_PREROUTING_PRIORITY > -150 && NFT_PREROUTING_PRIORITY < -100, true, 'after mangle, before dstnat');
  assert.deepEqual(buildRuleset([]), buildDeleteTable());
  assert.equal(JSON.stringify(buildDeleteTable()).includes('"chain"'), false);
});

test('registry: what the ruleset records parses back (as nft -j list returns it, handles and all)', () => {
  for (const name of Object.keys(SCENARIOS)) {
    const plan = planFlowpin(SCENARIOS[name]!);
    const listed = { nftables: buildRuleset(plan.twins).nftables.map((c) => ('add' in c ? { ...(c.add as object) } : c)).map((c) => ('rule' in c ? { rule: { ...(c.rule as object), handle: 7 } } : c)) };
    assert.deepEqual(parseRegistry(listed), plan.twins.map((t) => ({ original: t.original, fwmark: t.fwmark })), name);
  }
  assert.deepEqual(parseRegistry({ nftables: [{ rule: { family: 'inet', table: 'conndrain', chain: 'twins', comment: 'conndrain-twin fwmark=0x0c000001 original=bogus' } }] }), []);
  assert.deepEqual(parseRegistry('nope'), []);
});

test('pin counters: packets marked per twin mark', () => {
  const listing = { nftables: [{ rule: { chain: 'prerouting', expr: [{ counter: { packets: 42, bytes: 100 } }, { mangle: { key: { meta: { key: 'mark' } }, value: 0x0c000001 } }] } }] };
  assert.equal(parsePinCounters(listing).get(0x0c000001), 42);
});

test('registry: a twin records its original by the one text form of a service key (formatServiceKey), IPv6 and fwmark services too', () => {
  const rule = (comment: string): unknown => ({ nftables: [{ rule: { family: 'inet', table: 'conndrain', chain: 'twins', comment } }] });
  for (const key of [{ family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80 }, { family: 6, protocol: 'tcp', address: 'fd00::1', port: 0 }, { family: 4, fwmark: 4660 }, { family: 6, fwmark: 7 }] as const) {
    const comment = `conndrain-twin fwmark=0x0c000001 original=${formatServiceKey(key)}`;
    assert.deepEqual(parseRegistry(rule(comment)), [{ original: key, fwmark: 0x0c000001 }], comment);
  }
  assert.deepEqual(parseRegistry(rule('conndrain-twin fwmark=0x0c000001 original=tcp:[fd00::1]:443')), [{ original: { family: 6, protocol: 'tcp', address: 'fd00::1', port: 443 }, fwmark: 0x0c000001 }]);
  for (const bad of ['tcp/4/1.2.3.4/80', 'fwmark:0', 'icmp:1.2.3.4:1', 'tcp::80', '']) assert.deepEqual(parseRegistry(rule(`conndrain-twin fwmark=0x0c000001 original=${bad}`)), [], bad);
});
