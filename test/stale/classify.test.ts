import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryConntrack } from 'netlink-native/memory';
import { classifyEntries, excludePodIps, GraceTracker, groupByService, livePodIps, OwnershipIndex, planDeletion, scanStaleEntries, type DnatScanner } from '../../src/stale/index.js';
import { parseInventory } from '../../src/stale/inventory-file.js';
import { directEntry, natEntry, slice } from './fixtures.js';

function index(): OwnershipIndex {
  const i = new OwnershipIndex();
  i.upsert(slice('dns', 'kube-dns', [{ port: 53, protocol: 'UDP' }], [{ ip: '10.244.0.2' }, { ip: '10.244.0.3', ready: false, serving: false, terminating: true }], 'kube-system'));
  i.upsert(slice('web', 'web', [{ port: 8080 }], [{ ip: '10.244.0.4' }]));
  return i;
}

describe('classifyEntries', () => {
  it('calls stale exactly the DNAT entries whose target no endpoint owns and no live pod holds', () => {
    const entries = [
      natEntry('udp', '10.96.0.10', 53, '10.244.0.2', 53), // owned
      natEntry('udp', '10.96.0.10', 53, '10.244.0.3', 53), // terminating, owned
      natEntry('udp', '10.96.0.10', 53, '10.244.0.9', 53), // never owned -> stale
      natEntry('udp', '10.96.0.10', 53, '10.244.0.4', 53), // address owned on tcp/8080 only -> stale
      natEntry('tcp', '10.96.0.20', 80, '10.244.0.4', 8080), // owned
      natEntry('tcp', '10.96.0.20', 80, '10.244.0.7', 8080), // a live pod of this node (hostPort) -> not stale
      directEntry('tcp', '10.244.0.9', 53), // not NAT'ed
    ];
    const result = classifyEntries(entries, index(), new Set(['10.244.0.7']));
    assert.deepEqual(result.counts, { 'not-nat': 1, owned: 3, 'pod-ip': 1, stale: 2 });
    assert.deepEqual(result.stale.map((e) => `${e.target.address}:${String(e.target.port)}`), ['10.244.0.9:53', '10.244.0.4:53']);
    const groups = groupByService(result.stale, index());
    assert.equal(groups.length, 1);
    assert.deepEqual(groups[0]?.service, { protocol: 'udp', address: '10.96.0.10', port: 53 });
    assert.equal(groups[0]?.entries.length, 2);
  });

  it('keeps protocol, state and remaining timeout of each stale entry', () => {
    const [entry] = classifyEntries([natEntry('tcp', '10.96.0.20', 80, '10.244.0.50', 8080, { timeout: 4321, state: 'TIME_WAIT' })], index(), new Set()).stale;
    assert.equal(entry?.protocol, 'tcp');
    assert.equal(entry?.state, 'TIME_WAIT');
    assert.equal(entry?.timeout, 4321);
  });
});

describe('scanStaleEntries (the C-side pre-filter path)', () => {
  it('classifies exactly as classifyEntries over the whole dump, and excludePodIps as a live pod set would', async () => {
    const table = new MemoryConntrack();
    const dnat = (target: string, port: number, protocol: 'udp' | 'tcp', count: number, srcPort: number) => ({ protocol, origSrc: '10.0.0.1', srcPort, origDst: '10.96.0.10', dstPort: port, replySrc: target, replySrcPort: port, count, dnat: true });
    await table.insertConntrackForTest([
      dnat('10.244.0.2', 53, 'udp', 3, 1000), // owned
      dnat('10.244.0.3', 53, 'udp', 2, 2000), // terminating, owned
      dnat('10.244.0.9', 53, 'udp', 4, 3000), // stale
      dnat('10.244.0.4', 53, 'udp', 2, 4000), // stale: owned on tcp/8080 only
      dnat('10.244.0.4', 8080, 'tcp', 1, 5000), // owned
      dnat('10.244.0.7', 8080, 'tcp', 2, 6000), // a live pod's
      { protocol: 'udp', origSrc: '10.0.0.1', srcPort: 7000, origDst: '10.244.0.9', dstPort: 53, count: 2 }, // not NAT'ed
    ]);
    const pods = new Set(['10.244.0.7']);
    const whole = classifyEntries(await table.listConntrack(), index(), pods);
    const scan = await scanStaleEntries(table, index(), pods);
    assert.deepEqual(scan.classification.counts, whole.counts);
    assert.deepEqual(scan.classification.counts, { 'not-nat': 2, owned: 6, 'pod-ip': 2, stale: 6 });
    assert.equal(scan.classification.scanned, 16);
    assert.deepEqual(scan.classification.stale.map((e) => e.key).sort(), whole.stale.map((e) => e.key).sort());
    const later = excludePodIps((await scanStaleEntries(table, index(), new Set())).classification, pods);
    assert.deepEqual(later.counts, whole.counts);
  });

  it('classifies streamed batches as they come and keeps only the final pass after a restarted dump', async () => {
    const stale = natEntry('udp', '10.96.0.10', 53, '10.244.0.9', 53);
    const podHeld = natEntry('tcp', '10.96.0.20', 80, '10.244.0.7', 8080);
    const scanner: DnatScanner = {
      scanDnatEntries: (options) => {
        // pass 0 was overrun by the kernel: its batch is superseded by pass 1's
        options.onEntries?.([stale, stale, stale], 0);
        options.onEntries?.([stale], 1);
        options.onEntries?.([podHeld], 1);
        return Promise.resolve({ entries: [natEntry('udp', '10.96.0.10', 53, '10.244.0.8', 53)], scanned: 10, notNat: 2, owned: 5, pass: 1, ms: 0 });
      },
    };
    const scan = await scanStaleEntries(scanner, index(), new Set(['10.244.0.7']));
    assert.equal(scan.classification.scanned, 10);
    assert.deepEqual(scan.classification.counts, { 'not-nat': 2, owned: 5, 'pod-ip': 1, stale: 2 });
    assert.deepEqual(scan.classification.stale.map((e) => e.target.address), ['10.244.0.9', '10.244.0.8']);
  });
});

describe('GraceTracker', () => {
  it('allows a delete only after the entry has been stale for longer than the grace', () => {
    const grace = new GraceTracker(5000);
    assert.deepEqual([...grace.observe(['a'], 1000).deletable], []);
    assert.deepEqual([...grace.observe(['a', 'b'], 6000).deletable], [], 'exactly the grace is not longer than it');
    assert.deepEqual([...grace.observe(['a', 'b'], 6001).deletable], ['a']);
    assert.deepEqual([...grace.observe(['a', 'b'], 11_001).deletable].sort(), ['a', 'b']);
  });

  it('forgets an entry as soon as it is owned again, so a new stale spell starts over', () => {
    const grace = new GraceTracker(5000);
    grace.observe(['a'], 0);
    const { deletable, waiting } = grace.observe([], 4000); // an endpoint appeared during the grace
    assert.equal(deletable.size + waiting, 0);
    assert.equal(grace.staleSince('a'), undefined);
    grace.observe(['a'], 4500);
    assert.equal(grace.observe(['a'], 9000).deletable.size, 0);
    assert.equal(grace.observe(['a'], 9501).deletable.size, 1);
  });
});

describe('planDeletion', () => {
  it('deletes every deletable stale entry by its exact ref (siblings and owned ports of the address are not affected) and holds the rest for the grace', () => {
    const i = index();
    const entries = [
      natEntry('udp', '10.96.0.10', 53, '10.244.0.9', 53, { id: 11 }),
      natEntry('udp', '10.96.0.10', 53, '10.244.0.4', 53, { id: 12 }), // stale, although 10.244.0.4 is an endpoint on tcp/8080
      natEntry('tcp', '10.96.0.20', 80, '10.244.0.4', 8080, { id: 13 }), // owned: never in the plan
      natEntry('udp', '10.96.0.10', 53, '10.244.0.12', 53, { id: 14 }), // stale, still in grace
    ];
    const classification = classifyEntries(entries, i, new Set());
    const deletable = new Set(classification.stale.filter((e) => e.target.address !== '10.244.0.12').map((e) => e.key));
    const plan = planDeletion(classification.stale, deletable);
    assert.deepEqual(plan.covered.map((e) => e.ref.id), [11, 12]);
    assert.deepEqual(plan.covered[0]?.ref, { family: 4, protocolNumber: 17, original: entries[0]?.original, zone: 0, id: 11 });
    assert.deepEqual(plan.blocked.map((b) => `${b.entry.target.address} ${b.reason}`), ['10.244.0.12 waiting-grace']);
  });
});

describe('parseInventory and livePodIps', () => {
  it('reads a kubectl List of slices and pods, and only live pods guard their IPs', () => {
    const text = JSON.stringify({
      kind: 'List',
      items: [
        { kind: 'EndpointSlice', metadata: { name: 's', namespace: 'n' }, ports: [{ port: 1 }], endpoints: [{ addresses: ['10.1.1.1'] }] },
        { kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n1' }, status: { phase: 'Running', podIP: '10.1.1.2', podIPs: [{ ip: '10.1.1.2' }, { ip: 'FD00::0002' }] } },
        { kind: 'Pod', metadata: { name: 'done' }, spec: { nodeName: 'n1' }, status: { phase: 'Succeeded', podIP: '10.1.1.3' } },
        { kind: 'Pod', metadata: { name: 'elsewhere' }, spec: { nodeName: 'n2' }, status: { phase: 'Running', podIP: '10.1.1.4' } },
        { kind: 'ConfigMap' },
      ],
    });
    const parsed = parseInventory(text);
    assert.ok(parsed.ok);
    assert.equal(parsed.value.slices.length, 1);
    assert.deepEqual([...livePodIps(parsed.value.pods, 'n1')].sort(), ['10.1.1.2', 'fd00::2']);
    assert.deepEqual([...livePodIps(parsed.value.pods)].sort(), ['10.1.1.2', '10.1.1.4', 'fd00::2']);
  });

  it('reads multi-document YAML and an EndpointSliceList without item kinds', () => {
    const parsed = parseInventory('kind: EndpointSliceList\nitems:\n- metadata: {name: a}\n  endpoints: []\n---\nkind: EndpointSlice\nmetadata: {name: b}\n');
    assert.ok(parsed.ok);
    assert.equal(parsed.value.slices.length, 2);
  });

  it('rejects a broken file as a whole, naming the problem', () => {
    const parsed = parseInventory('kind: EndpointSlice\nendpoints: 7\n---\n{ broken');
    assert.equal(parsed.ok, false);
    if (!parsed.ok) assert.equal(parsed.error.length, 2);
  });
});
