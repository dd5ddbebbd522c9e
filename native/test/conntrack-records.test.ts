/**
 * The record layout of native/src/napi/ct_records.h, pinned from the JavaScript side: hand-built
 * records decode to the entries the addon's old object form gave (the kernel contract suites
 * check the C encoder against the kernel and the stand-in).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { protocolName } from '../lib/conntrack-names.js';
import { decodeEntryRecords, RECORD_SIZE } from '../lib/conntrack-records.js';

interface TupleSpec { src: number[]; dst: number[]; srcPort?: number; dstPort?: number; icmp?: [number, number, number] }

function record(spec: { family: 4 | 6; proto: number; state?: number; zone: number; zoneBits?: number; status: number; timeout: number; mark: number; id: number; orig: TupleSpec; reply: TupleSpec }): Uint8Array {
  const out = new Uint8Array(RECORD_SIZE);
  const view = new DataView(out.buffer);
  const flags = (t: TupleSpec): number => (t.srcPort !== undefined ? 1 : 0) | (t.icmp !== undefined ? 2 : 0);
  out[0] = spec.family;
  out[1] = spec.proto;
  out[2] = spec.state === undefined ? 0 : 1;
  out[3] = spec.state ?? 0;
  out[4] = 1;
  out[5] = flags(spec.orig) | (flags(spec.reply) << 2) | (spec.zoneBits ?? 0);
  view.setUint16(6, spec.zone, true);
  view.setUint32(8, spec.status, true);
  view.setUint32(12, spec.timeout, true);
  view.setUint32(16, spec.mark, true);
  view.setUint32(20, spec.id, true);
  const tuple = (at: number, t: TupleSpec): void => {
    out.set(t.src, at);
    out.set(t.dst, at + 16);
    view.setUint16(at + 32, t.srcPort ?? 0, true);
    view.setUint16(at + 34, t.dstPort ?? 0, true);
    view.setUint16(at + 36, t.icmp?.[0] ?? 0, true);
    out[at + 38] = t.icmp?.[1] ?? 0;
    out[at + 39] = t.icmp?.[2] ?? 0;
  };
  tuple(24, spec.orig);
  tuple(64, spec.reply);
  return out;
}

function concat(parts: Uint8Array[]): ArrayBuffer {
  const out = new Uint8Array(parts.length * RECORD_SIZE);
  parts.forEach((p, i) => out.set(p, i * RECORD_SIZE));
  return out.buffer;
}

const V6_A = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a];
const V6_B = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b];

describe('conntrack entry records', () => {
  it('decodes IPv4 TCP with state, IPv6 UDP without, and ICMP tuples', () => {
    const entries = decodeEntryRecords(concat([
      record({ family: 4, proto: 6, state: 3, zone: 7, zoneBits: 32, status: 0x1ae, timeout: 431999, mark: 0x10, id: 4000000000, orig: { src: [10, 1, 0, 1], dst: [10, 96, 0, 10], srcPort: 40000, dstPort: 80 }, reply: { src: [10, 128, 0, 9], dst: [10, 1, 0, 1], srcPort: 8080, dstPort: 40000 } }),
      record({ family: 6, proto: 17, zone: 0, status: 0x20, timeout: 30, mark: 0, id: 1, orig: { src: V6_A, dst: V6_B, srcPort: 53000, dstPort: 53 }, reply: { src: V6_B, dst: V6_A, srcPort: 53, dstPort: 53000 } }),
      record({ family: 4, proto: 1, zone: 0, status: 0, timeout: 29, mark: 0, id: 2, orig: { src: [192, 168, 0, 1], dst: [192, 168, 0, 2], icmp: [77, 8, 0] }, reply: { src: [192, 168, 0, 2], dst: [192, 168, 0, 1], icmp: [77, 0, 0] } }),
    ]));
    assert.equal(entries.length, 3);
    assert.deepEqual(entries[0], {
      family: 4, protocol: 'tcp', protocolNumber: 6,
      original: { src: '10.1.0.1', dst: '10.96.0.10', srcPort: 40000, dstPort: 80 },
      reply: { src: '10.128.0.9', dst: '10.1.0.1', srcPort: 8080, dstPort: 40000 },
      timeout: 431999, mark: 0x10, zone: 7, origZone: 0, replyZone: 7, status: 0x1ae, statusFlags: ['SEEN_REPLY', 'ASSURED', 'CONFIRMED', 'DST_NAT', 'SRC_NAT_DONE', 'DST_NAT_DONE'], id: 4000000000, state: 'ESTABLISHED',
    });
    assert.deepEqual(entries[1]?.original, { src: 'fd00::a', dst: 'fd00::b', srcPort: 53000, dstPort: 53 });
    assert.equal(entries[1]?.state, undefined);
    assert.deepEqual(entries[1]?.statusFlags, ['DST_NAT']);
    assert.deepEqual(entries[2]?.original, { src: '192.168.0.1', dst: '192.168.0.2', icmpId: 77, icmpType: 8, icmpCode: 0 });
    assert.deepEqual(entries[2]?.reply, { src: '192.168.0.2', dst: '192.168.0.1', icmpId: 77, icmpType: 0, icmpCode: 0 });
  });

  it('names a protocol number without a name proto-<n>, as the delete counts do', () => {
    const [entry] = decodeEntryRecords(concat([
      record({ family: 4, proto: 115, zone: 0, status: 0, timeout: 600, mark: 0, id: 3, orig: { src: [10, 0, 0, 1], dst: [10, 0, 0, 2] }, reply: { src: [10, 0, 0, 2], dst: [10, 0, 0, 1] } }),
    ]));
    assert.equal(entry?.protocol, 'proto-115');
    assert.equal(entry?.protocolNumber, 115);
    assert.equal(protocolName(115), 'proto-115');
    assert.equal(protocolName(132), 'sctp');
  });

  it('decodes an empty buffer to no entries', () => {
    assert.deepEqual(decodeEntryRecords(new ArrayBuffer(0)), []);
  });
});
