/**
 * A 64-bit digest of a byte range, as two 32-bit halves from two multiply-xor passes with
 * seeds drawn once per process: what tells an endpoint's bytes from the ones its slice carried
 * last time without decoding them. Not a cryptographic hash; the random seeds keep anyone who
 * names pods from choosing two endpoints that collide, and 64 bits make a chance collision
 * (one in ~1.8e19 per comparison) rarer than a flipped bit in memory. Each step of each half
 * is a bijection of its state for a given input word, so ranges of one length that differ in
 * one place never digest alike.
 */
import { randomFillSync } from 'node:crypto';

export interface DigestSeed {
  readonly high: number;
  readonly low: number;
}

const SEEDS = randomFillSync(new Uint32Array(2));
/** This process's seeds. */
export const PROCESS_SEED: DigestSeed = { high: SEEDS[0] as number, low: SEEDS[1] as number };

/** Mixes one 32-bit word into the high half. */
function stepHigh(h: number, w: number): number {
  return Math.imul(h ^ w, 0x01000193);
}

/** Mixes one 32-bit word into the low half. */
function stepLow(l: number, w: number): number {
  return Math.imul((l << 5) | (l >>> 27), 0x85ebca6b) ^ w;
}

/** murmur3's fmix32: every input bit reaches every output bit (a bijection). */
function finish(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * Writes the digest of the bytes [start, end) of `view` into out[at] (high half) and
 * out[at + 1] (low half), four bytes a step (little-endian words, any alignment) and the rest
 * one by one.
 */
export function digestInto(view: DataView, start: number, end: number, out: Uint32Array, at: number, seed: DigestSeed = PROCESS_SEED): void {
  let h = seed.high ^ (end - start);
  let l = seed.low ^ Math.imul(end - start, 0x9e3779b1);
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const w = view.getInt32(i, true);
    h = stepHigh(h, w);
    l = stepLow(l, w);
  }
  for (; i < end; i++) {
    const b = view.getUint8(i);
    h = stepHigh(h, b);
    l = stepLow(l, b);
  }
  out[at] = finish(h);
  out[at + 1] = finish(l);
}

/** A DataView over all of `bytes` (what `digestInto` reads). */
export function dataViewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
