/**
 * IP address text <-> bytes, written the way the kernel side prints them (glibc inet_ntop),
 * so the in-memory stand-in and the addon agree on every string.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface ParsedAddress {
  family: 4 | 6;
  /** 4 or 16 bytes. */
  bytes: number[];
}

export function parseAddress(text: string): ParsedAddress | undefined {
  if (isIPv4(text)) return { family: 4, bytes: text.split('.').map(Number) };
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let hexPart = text;
  let tail: number[] = [];
  const embedded = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (embedded !== null) {
    tail = (embedded[2] ?? '').split('.').map(Number);
    hexPart = embedded[1] ?? '';
    if (!hexPart.endsWith('::')) hexPart = hexPart.slice(0, -1);
  }
  const halves = hexPart.split('::');
  if (halves.length > 2) return undefined;
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const wanted = tail.length > 0 ? 6 : 8;
  const fill = halves.length === 2 ? wanted - left.length - right.length : 0;
  if (fill < 0) return undefined;
  const groups = [...left, ...new Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16));
  if (groups.length !== wanted || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  return { family: 6, bytes: [...groups.flatMap((g) => [g >> 8, g & 0xff]), ...tail] };
}

/** The kernel-side spelling (glibc inet_ntop): lowercase, first longest zero run compressed. */
/** An IPv4 address held as a 32-bit number (a.b.c.d = a<<24 | b<<16 | c<<8 | d, signed or not), in dotted form. */
export function formatIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function formatAddress(a: ParsedAddress): string {
  if (a.family === 4) return a.bytes.join('.');
  const b = a.bytes;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  // glibc inet_ntop6: ::a.b.c.d and ::ffff:a.b.c.d keep the IPv4 part dotted
  if (bestStart === 0 && (bestLen === 6 || (bestLen === 5 && groups[5] === 0xffff))) {
    return `::${bestLen === 5 ? 'ffff:' : ''}${b.slice(12).join('.')}`;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** One spelling per address (for set membership): `4:` / `6:` + bytes. */
export function addressKey(text: string): string | undefined {
  const a = parseAddress(text);
  return a === undefined ? undefined : `${a.family}:${a.bytes.join('.')}`;
}

export function canonicalAddress(text: string): string | undefined {
  const a = parseAddress(text);
  return a === undefined ? undefined : formatAddress(a);
}
