/** Dotted IPv4 <-> a signed 32-bit integer (a small integer in V8: no heap object per address). */
export function packIpv4(ip: string): number | undefined {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return undefined;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots += 1;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return undefined; // leading zero: not the canonical form
      part = part * 10 + (c - 48);
      digits += 1;
      if (part > 255) return undefined;
    } else return undefined;
  }
  if (dots !== 3 || digits === 0) return undefined;
  return (value * 256 + part) | 0;
}

export function unpackIpv4(packed: number): string {
  const v = packed >>> 0;
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}
