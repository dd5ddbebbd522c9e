/**
 * TEST SUPPORT: what a ConntrackFillSpec creates, computed in TypeScript for the in-memory
 * stand-in. Mirrors add_insert() in native/src/ops/conntrack.c; the contract suite checks that
 * both produce the same table.
 */
import { formatAddress, parseAddress } from './conntrack-address.js';
import type { ConntrackFillSpec } from './conntrack-convert.js';
import { PROTOCOL_NUMBERS } from './types.js';
import type { ConntrackTuple, IpFamily } from './types.js';

export interface FilledEntry {
  family: IpFamily;
  protocolNumber: number;
  original: ConntrackTuple;
  reply: ConntrackTuple;
}

const PORTED = new Set([6, 17, 132, 136, 33]);

function addToAddress(text: string, n: number): string {
  const a = parseAddress(text);
  if (a === undefined) throw new Error(`not an address: ${text}`);
  const at = a.family === 4 ? 0 : 12;
  let v = (((a.bytes[at] ?? 0) << 24) | ((a.bytes[at + 1] ?? 0) << 16) | ((a.bytes[at + 2] ?? 0) << 8) | (a.bytes[at + 3] ?? 0)) >>> 0;
  v = (v + n) >>> 0;
  const bytes = [...a.bytes];
  bytes[at] = v >>> 24;
  bytes[at + 1] = (v >>> 16) & 0xff;
  bytes[at + 2] = (v >>> 8) & 0xff;
  bytes[at + 3] = v & 0xff;
  return formatAddress({ family: a.family, bytes });
}

/** The entries one spec creates, in order. */
export function expandFillSpec(spec: ConntrackFillSpec): FilledEntry[] {
  const family = parseAddress(spec.origSrc)?.family;
  if (family === undefined || parseAddress(spec.origDst)?.family !== family) throw new Error('origSrc and origDst must be addresses of one family');
  const protocolNumber = PROTOCOL_NUMBERS[spec.protocol];
  const ported = PORTED.has(protocolNumber);
  const count = spec.count ?? 1;
  const srcCount = spec.srcCount ?? 1;
  const replySrcCount = spec.replySrcCount ?? 1;
  const srcPort = spec.srcPort ?? 1024;
  const dstPort = spec.dstPort ?? 80;
  const replySrcPort = spec.replySrcPort ?? dstPort;
  const out: FilledEntry[] = [];
  for (let i = 0; i < count; i++) {
    const src = addToAddress(spec.origSrc, i % srcCount);
    const sport = (srcPort + (Math.floor(i / srcCount) % 60000)) & 0xffff;
    const replySrc = addToAddress(spec.replySrc ?? spec.origDst, i % replySrcCount);
    const original: ConntrackTuple = { src, dst: formatAddress(parseAddress(spec.origDst) ?? { family, bytes: [] }) };
    const reply: ConntrackTuple = { src: replySrc, dst: src };
    if (ported) {
      original.srcPort = sport;
      original.dstPort = dstPort;
      reply.srcPort = replySrcPort;
      reply.dstPort = sport;
    }
    out.push({ family, protocolNumber, original, reply });
  }
  return out;
}
