/**
 * The address index keeps a scan's real servers as rows of numbers; every answer the hold asks
 * of it (`at`, `orderOf`, `rememberWeight`) must equal the one computed from the scan's objects,
 * as the index of objects it replaced gave them: over random scans (an address in several
 * services, IPv4 and IPv6 in either case, non-canonical text, services deleted while read,
 * tunnel and threshold specs) and random weight edits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { IpvsDestination, IpvsService } from 'netlink-native/types';
import { formatDestinationKey, formatServiceKey } from 'netlink-native/ipvs-keys';
import { AddressIndex, AddressIndexBuilder } from './address-index.js';
import { heldId, type HeldServer } from './held-server.js';
import type { ListedService } from './ipvs-scan.js';

const ADDRESSES = ['10.0.0.1', '10.0.0.2', '10.244.1.7', '192.168.0.1', 'fd00::a', 'FD00::A', 'fd00::b', '010.0.0.1'];

const destArb: fc.Arbitrary<IpvsDestination> = fc.record({
  address: fc.constantFrom(...ADDRESSES),
  port: fc.constantFrom(80, 8080, 9000),
  family: fc.constantFrom(4 as const, 6 as const),
  forwarding: fc.constantFrom('masq' as const, 'tunnel' as const, 'route' as const),
  weight: fc.integer({ min: 0, max: 5 }),
  upperThreshold: fc.constantFrom(0, 100),
  lowerThreshold: fc.constantFrom(0, 10),
  tunnelType: fc.constantFrom('ipip' as const, 'gue' as const),
  tunnelPort: fc.constantFrom(0, 6080),
  tunnelFlags: fc.constantFrom(0, 1),
  activeConnections: fc.integer({ min: 0, max: 3 }),
  inactiveConnections: fc.integer({ min: 0, max: 3 }),
  persistentConnections: fc.constant(0),
});

const listedArb: fc.Arbitrary<ListedService[]> = fc
  .array(fc.record({ port: fc.integer({ min: 1, max: 6 }), dests: fc.option(fc.array(destArb, { maxLength: 6 }), { nil: undefined }) }), { maxLength: 6 })
  .map((services) =>
    services.map(({ port, dests }): ListedService => ({
      service: { key: { family: 4, protocol: 'tcp', address: '10.96.0.1', port }, scheduler: 'mh', flags: 0, flagNames: [], timeout: 0, netmask: 0 } satisfies IpvsService,
      dests,
    })),
  );

/** The answers of the index of objects (address lowercased -> servers; each service's keys), with weights edited as rememberWeight does. */
function model(listed: readonly ListedService[]): { at(ip: string): Array<{ service: string; dest: IpvsDestination }>; orderOf(id: string): string[] | undefined; remember(held: HeldServer, weight: number): void } {
  const entries: Array<{ service: IpvsService; dest: IpvsDestination }> = [];
  for (const l of listed) for (const d of l.dests ?? []) entries.push({ service: l.service, dest: { ...d } });
  const orders = new Map(listed.filter((l) => l.dests !== undefined).map((l) => [formatServiceKey(l.service.key), (l.dests ?? []).map(formatDestinationKey)]));
  return {
    at: (ip) => entries.filter((e) => e.dest.address.toLowerCase() === ip.toLowerCase()).map((e) => ({ service: formatServiceKey(e.service.key), dest: e.dest })),
    orderOf: (id) => orders.get(id),
    remember: (held, weight) => {
      for (const e of entries) if (e.dest.address.toLowerCase() === held.destination.address.toLowerCase() && heldId(e.service.key, e.dest) === heldId(held.service, held.destination)) e.dest.weight = weight;
    },
  };
}

/** A server's fields the hold reads (the index keeps no connection counts). */
const withoutCounts = (d: IpvsDestination): Omit<IpvsDestination, 'activeConnections' | 'inactiveConnections' | 'persistentConnections'> => {
  const { activeConnections: _a, inactiveConnections: _i, persistentConnections: _p, ...rest } = d;
  return rest;
};

/** Replaces `index` with what a full scan listed, service by service, as the hold's scan does. */
function rebuild(index: AddressIndex, listed: readonly ListedService[]): void {
  const builder = new AddressIndexBuilder();
  for (const l of listed) builder.add(l.service, l.dests);
  index.replace(builder);
}

/** A scan of `n` servers over `services` services. */
function bigScan(n: number, services: number): ListedService[] {
  return Array.from({ length: services }, (_, s): ListedService => ({
    service: { key: { family: 4, protocol: 'tcp', address: '10.96.0.1', port: s + 1 }, scheduler: 'mh', flags: 0, flagNames: [], timeout: 0, netmask: 0 },
    dests: Array.from({ length: Math.ceil(n / services) }, (_, i) => ({ ...DEST, address: `10.1.${String(s)}.${String(i % 250)}`, port: 80 + Math.floor(i / 250) })),
  }));
}

const DEST: IpvsDestination = { address: '10.0.0.1', port: 80, family: 4, forwarding: 'masq', weight: 1, upperThreshold: 0, lowerThreshold: 0, tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0 };

test('at, orderOf and rememberWeight answer as the scan objects do', () => {
  fc.assert(
    fc.property(listedArb, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 9 }))), fc.array(fc.integer({ min: 0, max: 700 }), { maxLength: 2 }), (listed, edits, before) => {
      const index = new AddressIndex();
      // Scans before this one, larger or smaller: the next one replaces them whole.
      for (const n of before) rebuild(index, bigScan(n, 3));
      rebuild(index, listed);
      const expected = model(listed);
      const servers = listed.flatMap((l) => (l.dests ?? []).map((dest) => ({ service: l.service, dest })));
      for (const [pick, weight] of edits) {
        const chosen = servers[pick % Math.max(1, servers.length)];
        if (chosen === undefined) break;
        const held = { service: chosen.service.key, destination: { address: chosen.dest.address, port: chosen.dest.port } } as HeldServer;
        index.rememberWeight(held, weight);
        expected.remember(held, weight);
      }
      for (const ip of [...ADDRESSES, '10.0.0.9', 'FD00::B']) {
        const got = index.at(ip).map((s) => ({ service: formatServiceKey(s.service.key), dest: withoutCounts(s.dest) }));
        assert.deepEqual(got, expected.at(ip).map((s) => ({ service: s.service, dest: withoutCounts(s.dest) })), ip);
      }
      for (let port = 1; port <= 7; port++) {
        const id = formatServiceKey({ family: 4, protocol: 'tcp', address: '10.96.0.1', port });
        assert.deepEqual(index.orderOf(id), expected.orderOf(id), id);
      }
    }),
    { numRuns: 300 },
  );
});

test('a rebuild replaces the whole index; an empty scan leaves nothing', () => {
  const index = new AddressIndex();
  const service: IpvsService = { key: { family: 4, protocol: 'tcp', address: '10.96.0.1', port: 80 }, scheduler: 'rr', flags: 0, flagNames: [], timeout: 0, netmask: 0 };
  const dest: IpvsDestination = { address: '10.0.0.1', port: 80, family: 4, forwarding: 'masq', weight: 1, upperThreshold: 0, lowerThreshold: 0, tunnelType: 'ipip', tunnelPort: 0, tunnelFlags: 0, activeConnections: 0, inactiveConnections: 0, persistentConnections: 0 };
  rebuild(index, [{ service, dests: [dest] }]);
  assert.equal(index.at('10.0.0.1').length, 1);
  assert.equal(index.size, 1);
  rebuild(index, []);
  assert.equal(index.at('10.0.0.1').length, 0);
  assert.equal(index.orderOf(formatServiceKey(service.key)), undefined);
  assert.equal(index.size, 0);
});

test('a scan under way leaves the index as the last scan made it until it replaces it', () => {
  const index = new AddressIndex();
  rebuild(index, bigScan(600, 4));
  const builder = new AddressIndexBuilder();
  for (const l of bigScan(300, 2)) builder.add(l.service, l.dests);
  assert.equal(index.size, 600);
  assert.equal(index.at('10.1.3.7').length, 1, 'a server of the last scan only');
  index.replace(builder);
  assert.equal(index.size, 300);
  assert.equal(index.at('10.1.3.7').length, 0);
  assert.deepEqual(index.at('10.1.1.7').map((s) => s.dest.port), [80]);
  assert.equal(index.orderOf(formatServiceKey({ family: 4, protocol: 'tcp', address: '10.96.0.1', port: 2 }))?.length, 150);
});

test('a scan past a page of rows (4,096) answers every server as the scan listed it', () => {
  const index = new AddressIndex();
  const listed = bigScan(10_000, 40); // 250 servers a service: each address once, at port 80
  rebuild(index, listed);
  assert.equal(index.size, 10_000);
  for (const l of listed) {
    for (const d of l.dests ?? []) {
      const found = index.at(d.address);
      assert.equal(found.length, 1, d.address);
      assert.equal(found[0]?.service.key.port, l.service.key.port, d.address);
      assert.equal(found[0]?.dest.port, 80, d.address);
    }
    assert.deepEqual(index.orderOf(formatServiceKey(l.service.key)), (l.dests ?? []).map(formatDestinationKey));
  }
});
