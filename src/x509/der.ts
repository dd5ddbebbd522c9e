/**
 * The few DER encodings an X.509 certificate is made of (ITU-T X.690): a value is tag, length,
 * contents, and a constructed value's contents are its parts' encodings one after another.
 * Only what `certificate.ts` writes; nothing here decodes (node:crypto's X509Certificate
 * parses what is written, in the tests).
 */

/** Tag, length (short form below 128 bytes, else 0x81-0x84 and the length's bytes), contents. */
export function tlv(tag: number, contents: Uint8Array): Buffer {
  const n = contents.length;
  let head: number[];
  if (n < 0x80) head = [tag, n];
  else if (n <= 0xff) head = [tag, 0x81, n];
  else if (n <= 0xffff) head = [tag, 0x82, n >> 8, n & 0xff];
  else if (n <= 0xffffff) head = [tag, 0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  else throw new RangeError(`DER: a value of ${n} bytes is longer than a certificate part can be`);
  return Buffer.concat([Buffer.from(head), contents]);
}

export const sequence = (...parts: Uint8Array[]): Buffer => tlv(0x30, Buffer.concat(parts));
export const set = (...parts: Uint8Array[]): Buffer => tlv(0x31, Buffer.concat(parts));
/** `[n] EXPLICIT`: a context-specific constructed tag around one encoded value. */
export const explicit = (n: number, value: Uint8Array): Buffer => tlv(0xa0 | n, value);
export const octetString = (bytes: Uint8Array): Buffer => tlv(0x04, bytes);
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
/** A BIT STRING of whole bytes (no unused bits), as a signature or a key is carried. */
export const bitString = (bytes: Uint8Array): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));

/**
 * A non-negative INTEGER from its big-endian magnitude: leading zero bytes dropped, and one
 * 0x00 put back where the first byte's top bit would make it negative.
 */
export function unsignedInteger(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = magnitude.subarray(start);
  if (bytes.length === 0) return tlv(0x02, Buffer.from([0]));
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

export const smallInteger = (value: number): Buffer => {
  if (!Number.isInteger(value) || value < 0 || value > 0x7f) throw new RangeError(`DER: ${value} is not a small non-negative integer`);
  return tlv(0x02, Buffer.from([value]));
};

/** An OBJECT IDENTIFIER from its dotted form: 40 x first + second, then base-128 arcs. */
export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map((arc) => {
    if (!/^(0|[1-9][0-9]*)$/.test(arc)) throw new RangeError(`DER: ${dotted} is not an object identifier`);
    return Number(arc);
  });
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined || first > 2 || (first < 2 && second > 39) || arcs.some((a) => !Number.isSafeInteger(a))) {
    throw new RangeError(`DER: ${dotted} is not an object identifier`);
  }
  const out: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const groups = [arc % 128];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v % 128) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/**
 * X.509's Time: UTCTime (YYMMDDHHMMSSZ) for the years 1950-2049, GeneralizedTime
 * (YYYYMMDDHHMMSSZ) otherwise (RFC 5280 4.1.2.5), to the second.
 */
export function time(at: Date): Buffer {
  const year = at.getUTCFullYear();
  if (!Number.isFinite(at.getTime()) || year < 0 || year > 9999) throw new RangeError(`DER: ${String(at)} is no time a certificate can carry`);
  const two = (n: number): string => String(n).padStart(2, '0');
  const rest = `${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}Z`;
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(`${two(year % 100)}${rest}`, 'ascii'));
  return tlv(0x18, Buffer.from(`${String(year).padStart(4, '0')}${rest}`, 'ascii'));
}
