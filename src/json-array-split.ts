/**
 * Finds, in the bytes of one JSON document, the array that is the value of one key of the
 * object at a given depth (the `endpoints` of an EndpointSlice in a watch line), and the span
 * and a 64-bit digest of each of its elements. The caller parses the rest of the document
 * with that array emptied, and each element only when its digest says it is not one it
 * already holds: a readiness flip rewrites a slice of 100 endpoints, of which one changed.
 *
 * A structural scan only (strings, escapes, nesting), as list-decoder.ts: it never accepts
 * what JSON.parse would refuse, because every byte it does not hand to JSON.parse is either
 * structure between the elements (checked here: whitespace and commas) or an element whose
 * bytes equal those of one parsed before. Anything unusual (the key twice at that depth, a key
 * with escapes at that depth, an element that is not an object, the array not found, broken
 * nesting) returns undefined: the caller parses the document whole, as it always could.
 */

// The bytes of JSON's structure as this module's own constants (json-bytes.ts has the same):
// V8 folds a module's own `const` into the loops below, not one imported from another module,
// which it loads at each use (the scan runs at about half the speed with imported ones).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * Where the array and its elements are. Its arrays are reused by the next call (a slice is
 * split and used in one go: no typed array, whose memory lives outside V8's heap, is
 * allocated per call); copy what is kept.
 */
export interface ArraySplit {
  /** Offset of the array's `[` and one past its `]`. */
  readonly open: number;
  readonly close: number;
  /** How many elements. */
  readonly count: number;
  /** Element `i` is `bytes[spans[2i], spans[2i + 1])`. */
  readonly spans: Int32Array;
  /** Two 32-bit lanes per element (`digests[2i]`, `digests[2i + 1]`), never both 0. */
  readonly digests: Int32Array;
}

/** The arrays every call writes (grown when a larger array comes). */
let spans = new Int32Array(512);
let digests = new Int32Array(512);

function room(count: number): void {
  if (2 * count + 2 <= spans.length) return;
  const grownSpans = new Int32Array(spans.length * 2);
  grownSpans.set(spans);
  spans = grownSpans;
  const grownDigests = new Int32Array(digests.length * 2);
  grownDigests.set(digests);
  digests = grownDigests;
}

interface Found {
  open: number;
  close: number;
  count: number;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** One past the string's closing quote; `from` is just after its opening quote. -1 when unterminated. */
function skipString(b: Uint8Array, from: number, end: number): number {
  let i = from;
  while (i < end) {
    const c = b[i] as number;
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
  return -1;
}

/** The digest of `b[from, to)`: two FNV-1a-style lanes with different odd multipliers, then a final mix. */
export function digestBytes(b: Uint8Array, from: number, to: number): [number, number] {
  let x = 0x811c9dc5 | 0;
  let y = 0x2f8a6b1d | 0;
  for (let i = from; i < to; i++) {
    const c = b[i] as number;
    x = Math.imul(x ^ c, 0x01000193);
    y = Math.imul(y ^ c, 0x5bd1e995);
  }
  const out = new Int32Array(2);
  putDigest(out, 0, x, y, to - from);
  return [out[0] as number, out[1] as number];
}

/** The final mix of both lanes (and the length) into the two 32-bit halves of a digest, at `out[at]` and `out[at + 1]`. */
function putDigest(out: Int32Array, at: number, lx: number, ly: number, length: number): void {
  let x = lx ^ length;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  x ^= x >>> 16;
  let y = Math.imul(ly ^ (ly >>> 15), 0x2c1b3c6d);
  y = Math.imul(y ^ (y >>> 12), 0x297a2d39);
  y ^= y >>> 15;
  out[at] = x;
  out[at + 1] = x === 0 && y === 0 ? 1 : y;
}

/**
 * The array under `key` (its UTF-8 bytes, no escapes) of the object whose members are at
 * `depth` (1: the document's own object; 2: an object one level in, as a watch line's
 * `object`), or undefined (see the file comment).
 */
export function splitArray(b: Uint8Array, key: Uint8Array, depth: number, start = 0, end = b.length): ArraySplit | undefined {
  let d = 0;
  let i = start;
  let found: Found | undefined;
  while (i < end) {
    const c = b[i] as number;
    if (c === QUOTE) {
      const from = i + 1;
      const next = skipString(b, from, end);
      if (next < 0) return undefined;
      i = next;
      if (d !== depth) continue;
      let j = i;
      while (j < end && isSpace(b[j] as number)) j++;
      if (b[j] !== COLON) continue; // a value, not a key
      const len = next - 1 - from;
      if (hasByte(b, from, next - 1, BACKSLASH)) return undefined; // an escaped key here: parse whole
      if (len !== key.length || !sameBytes(b, from, key)) continue;
      if (found !== undefined) return undefined; // the key twice
      j++;
      while (j < end && isSpace(b[j] as number)) j++;
      if (b[j] !== OPEN_ARRAY) return undefined;
      const elements = readElements(b, j, end);
      if (elements === undefined) return undefined;
      found = elements;
      i = elements.close;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) d++;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      d--;
      if (d < 0) return undefined;
    }
    i++;
  }
  if (found === undefined || d !== 0) return undefined;
  return { open: found.open, close: found.close, count: found.count, spans, digests };
}

function hasByte(b: Uint8Array, from: number, to: number, byte: number): boolean {
  for (let k = from; k < to; k++) if (b[k] === byte) return true;
  return false;
}

function sameBytes(b: Uint8Array, from: number, key: Uint8Array): boolean {
  for (let k = 0; k < key.length; k++) if (b[from + k] !== key[k]) return false;
  return true;
}

/** The elements of the array opening at `open`: each an object; between them only whitespace and commas. Digests each as it scans it. */
function readElements(b: Uint8Array, open: number, end: number): Found | undefined {
  let count = 0;
  let i = open + 1;
  for (;;) {
    while (i < end && isSpace(b[i] as number)) i++;
    if (i >= end) return undefined;
    if (b[i] === CLOSE_ARRAY && count === 0) return { open, close: i + 1, count };
    if (b[i] !== OPEN_OBJECT) return undefined;
    const s = i;
    // One pass: the structure (strings, escapes, nesting) and the digest's two lanes.
    let x = 0x811c9dc5 | 0;
    let y = 0x2f8a6b1d | 0;
    let d = 0;
    let closed = false;
    while (i < end) {
      let c = b[i++] as number;
      x = Math.imul(x ^ c, 0x01000193);
      y = Math.imul(y ^ c, 0x5bd1e995);
      if (c === QUOTE) {
        for (;;) {
          if (i >= end) return undefined;
          c = b[i++] as number;
          x = Math.imul(x ^ c, 0x01000193);
          y = Math.imul(y ^ c, 0x5bd1e995);
          if (c === QUOTE) break;
          if (c === BACKSLASH) {
            if (i >= end) return undefined;
            c = b[i++] as number;
            x = Math.imul(x ^ c, 0x01000193);
            y = Math.imul(y ^ c, 0x5bd1e995);
          }
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) d++;
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        d--;
        if (d === 0) {
          closed = c === CLOSE_OBJECT;
          break;
        }
      }
    }
    if (!closed) return undefined;
    room(count + 1);
    spans[2 * count] = s;
    spans[2 * count + 1] = i;
    putDigest(digests, 2 * count, x, y, i - s);
    count++;
    while (i < end && isSpace(b[i] as number)) i++;
    if (b[i] === COMMA) {
      i++;
      continue;
    }
    if (b[i] === CLOSE_ARRAY) return { open, close: i + 1, count };
    return undefined;
  }
}
