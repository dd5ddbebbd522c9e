/**
 * A field mask (src/field-mask.ts) applied to the bytes of one JSON value before JSON.parse:
 * the result is the JSON text of the same value with, inside objects at masked positions,
 * only the kept keys. So a pod of which the agent reads a dozen fields is parsed from a small
 * fraction of its bytes, and its managedFields, containers, volumes... are never built as strings
 * or objects (they are only scanned).
 *
 * Exact: `JSON.parse(apply(text))` equals the full parse with the mask applied (test:
 * json-mask.test.ts). Keys are compared decoded (a key with escapes is unescaped first); a
 * duplicate key is kept as often as it comes, so JSON.parse keeps the last as it would have.
 * Every byte is checked as JSON.parse would (dropped parts too): malformed input is an error,
 * never a partial object. Nesting deeper than MAX_DEPTH is an error.
 */
import type { FieldMask } from '../src/field-mask.js';
import { JSON_BYTES } from './json-bytes.js';

// Module constants, not imported bindings: json-bytes.ts says why.
const { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } = JSON_BYTES;

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const MAX_DEPTH = 512;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
const EMPTY = Buffer.alloc(0);
/** The output buffer kept between calls; a larger one (a huge object) is let go after its call. */
const KEPT_OUT_BYTES = 1024 * 1024;

/** A key of an object mask as UTF-8 bytes (a prefix without its `*`), and its mask. */
interface Entry {
  readonly bytes: Buffer;
  readonly mask: CompiledMask;
}

/** One object mask, compiled: keys compared as bytes (no string is built per key), prefixes longest first. */
export interface MaskNode {
  readonly exact: readonly Entry[];
  readonly prefixes: readonly Entry[];
}

/** A field mask compiled for lookups; `true` keeps the value whole. */
export type CompiledMask = MaskNode | true;

export function compileMask(mask: FieldMask): CompiledMask {
  if (mask === true) return true;
  const exact: Entry[] = [];
  const prefixes: Entry[] = [];
  for (const [k, v] of Object.entries(mask)) {
    exact.push({ bytes: Buffer.from(k, 'utf8'), mask: compileMask(v) });
    if (k.endsWith('*')) prefixes.push({ bytes: Buffer.from(k.slice(0, -1), 'utf8'), mask: compileMask(v) });
  }
  prefixes.sort((a, b) => b.bytes.length - a.bytes.length);
  return { exact, prefixes };
}

/** Whether `key[from, from + bytes.length)` is `bytes`. */
function startsWith(key: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (to - from < bytes.length) return false;
  for (let k = 0; k < bytes.length; k += 1) if (key[from + k] !== bytes[k]) return false;
  return true;
}

/** The mask of the key `key[from, to)` (unescaped UTF-8), or undefined when it is dropped. */
function lookup(node: MaskNode, key: Buffer, from: number, to: number): CompiledMask | undefined {
  const { exact, prefixes } = node;
  for (let k = 0; k < exact.length; k += 1) {
    const e = exact[k] as Entry;
    if (e.bytes.length === to - from && startsWith(key, from, to, e.bytes)) return e.mask;
  }
  for (let k = 0; k < prefixes.length; k += 1) {
    const e = prefixes[k] as Entry;
    if (startsWith(key, from, to, e.bytes)) return e.mask;
  }
  return undefined;
}

/**
 * The field mask's one key lookup (src/field-mask.ts says what a mask means): the mask of
 * `key` inside an object under `node`, or undefined when the key is dropped. An exact key wins
 * over a prefix, a longer prefix over a shorter one.
 */
export function keyMask(node: MaskNode, key: string): CompiledMask | undefined {
  const bytes = Buffer.from(key, 'utf8');
  return lookup(node, bytes, 0, bytes.length);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

export class JsonMask {
  private readonly root: CompiledMask;
  private src: Buffer = EMPTY;
  private end = 0;
  private i = 0;
  private out: Buffer = Buffer.alloc(64 * 1024);
  private o = 0;

  constructor(mask: FieldMask) {
    this.root = compileMask(mask);
  }

  /** The masked JSON text of `bytes[start, end)`; throws on malformed JSON. */
  apply(bytes: Buffer, start = 0, end = bytes.length): string {
    if (this.out.length < end - start) this.out = Buffer.alloc(end - start);
    this.src = bytes;
    this.end = end;
    this.i = start;
    this.o = 0;
    try {
      this.space();
      this.value(this.root, 0);
      this.space();
      if (this.i !== end) this.fail('unexpected data after the value');
      return this.out.toString('utf8', 0, this.o);
    } finally {
      this.src = EMPTY; // the input is not kept
      if (this.out.length > KEPT_OUT_BYTES) this.out = Buffer.alloc(64 * 1024);
    }
  }

  private fail(what: string): never {
    throw new SyntaxError(`JSON: ${what} at byte ${this.i}`);
  }

  private space(): void {
    while (this.i < this.end && isSpace(this.src[this.i] as number)) this.i += 1;
  }

  private byte(): number {
    if (this.i >= this.end) this.fail('unexpected end');
    return this.src[this.i] as number;
  }

  private copy(from: number, to: number): void {
    if (to - from > 64) this.src.copy(this.out, this.o, from, to);
    else for (let k = from; k < to; k += 1) this.out[this.o + k - from] = this.src[k] as number;
    this.o += to - from;
  }

  /** The mask of a key with escapes (rare): decoded first. */
  private lookupEscaped(mask: MaskNode, from: number, to: number): CompiledMask | undefined {
    return keyMask(mask, JSON.parse(this.src.toString('utf8', from, to)) as string);
  }

  private put(c: number): void {
    this.out[this.o] = c;
    this.o += 1;
  }

  /** One value at `i` under `mask`, written out (masked where it is an object or array). */
  private value(mask: CompiledMask, depth: number): void {
    const c = this.byte();
    if (mask !== true && c === OPEN_OBJECT) this.object(mask, depth + 1);
    else if (mask !== true && c === OPEN_ARRAY) this.array(mask, depth + 1);
    else {
      const from = this.i;
      this.skip(depth);
      this.copy(from, this.i);
    }
  }

  private object(mask: MaskNode, depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.i += 1;
    this.put(OPEN_OBJECT);
    this.space();
    if (this.byte() === CLOSE_OBJECT) {
      this.i += 1;
      this.put(CLOSE_OBJECT);
      return;
    }
    let first = true;
    for (;;) {
      if (this.byte() !== QUOTE) this.fail('expected a key');
      const keyFrom = this.i;
      const escaped = this.string();
      const keyTo = this.i;
      this.space();
      if (this.byte() !== COLON) this.fail("expected ':'");
      this.i += 1;
      this.space();
      const sub = escaped ? this.lookupEscaped(mask, keyFrom, keyTo) : lookup(mask, this.src, keyFrom + 1, keyTo - 1);
      if (sub === undefined) this.skip(depth);
      else {
        if (!first) this.put(COMMA);
        first = false;
        this.copy(keyFrom, keyTo);
        this.put(COLON);
        this.value(sub, depth);
      }
      this.space();
      const c = this.byte();
      this.i += 1;
      if (c === CLOSE_OBJECT) break;
      if (c !== COMMA) this.fail("expected ',' or '}'");
      this.space();
    }
    this.put(CLOSE_OBJECT);
  }

  private array(mask: MaskNode, depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.i += 1;
    this.put(OPEN_ARRAY);
    this.space();
    if (this.byte() === CLOSE_ARRAY) {
      this.i += 1;
      this.put(CLOSE_ARRAY);
      return;
    }
    for (let first = true; ; first = false) {
      if (!first) this.put(COMMA);
      this.value(mask, depth);
      this.space();
      const c = this.byte();
      this.i += 1;
      if (c === CLOSE_ARRAY) break;
      if (c !== COMMA) this.fail("expected ',' or ']'");
      this.space();
    }
    this.put(CLOSE_ARRAY);
  }

  /** Checks and passes one value at `i` (nothing written). */
  private skip(depth: number): void {
    const c = this.byte();
    if (c === QUOTE) this.string();
    else if (c === OPEN_OBJECT) this.skipObject(depth + 1);
    else if (c === OPEN_ARRAY) this.skipArray(depth + 1);
    else if (c === 0x74) this.literal(TRUE);
    else if (c === 0x66) this.literal(FALSE);
    else if (c === 0x6e) this.literal(NULL);
    else this.number();
  }

  private skipObject(depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.i += 1;
    this.space();
    if (this.byte() === CLOSE_OBJECT) {
      this.i += 1;
      return;
    }
    for (;;) {
      if (this.byte() !== QUOTE) this.fail('expected a key');
      this.string();
      this.space();
      if (this.byte() !== COLON) this.fail("expected ':'");
      this.i += 1;
      this.space();
      this.skip(depth);
      this.space();
      const c = this.byte();
      this.i += 1;
      if (c === CLOSE_OBJECT) return;
      if (c !== COMMA) this.fail("expected ',' or '}'");
      this.space();
    }
  }

  private skipArray(depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.i += 1;
    this.space();
    if (this.byte() === CLOSE_ARRAY) {
      this.i += 1;
      return;
    }
    for (;;) {
      this.skip(depth);
      this.space();
      const c = this.byte();
      this.i += 1;
      if (c === CLOSE_ARRAY) return;
      if (c !== COMMA) this.fail("expected ',' or ']'");
      this.space();
    }
  }

  /** Passes a string at `i` (its opening quote), checking escapes and control characters; true when it had an escape. */
  private string(): boolean {
    const { src, end } = this;
    let i = this.i + 1;
    let escaped = false;
    for (;;) {
      if (i >= end) {
        this.i = i;
        this.fail('unterminated string');
      }
      const c = src[i] as number;
      if (c === QUOTE) break;
      if (c < 0x20) {
        this.i = i;
        this.fail('control character in a string');
      }
      if (c === BACKSLASH) {
        escaped = true;
        const e = i + 1 < end ? (src[i + 1] as number) : 0;
        if (e === 0x75) {
          for (let k = 2; k < 6; k += 1) {
            if (i + k >= end || !isHex(src[i + k] as number)) {
              this.i = i;
              this.fail('bad \\u escape');
            }
          }
          i += 6;
          continue;
        }
        if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
          this.i = i;
          this.fail('bad escape');
        }
        i += 2;
        continue;
      }
      i += 1;
    }
    this.i = i + 1;
    return escaped;
  }

  private literal(word: Buffer): void {
    if (this.i + word.length > this.end || this.src.compare(word, 0, word.length, this.i, this.i + word.length) !== 0) this.fail('unexpected token');
    this.i += word.length;
  }

  /** A number as JSON writes it: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  private number(): void {
    if (this.at(this.i) === MINUS) this.i += 1;
    if (this.at(this.i) === ZERO) this.i += 1;
    else if (this.digits() === 0) this.fail('unexpected token');
    if (this.at(this.i) === DOT) {
      this.i += 1;
      if (this.digits() === 0) this.fail('bad number');
    }
    const e = this.at(this.i);
    if (e === 0x65 || e === 0x45) {
      this.i += 1;
      const sign = this.at(this.i);
      if (sign === PLUS || sign === MINUS) this.i += 1;
      if (this.digits() === 0) this.fail('bad number');
    }
  }

  /** The byte at `k`, 0 past the end. */
  private at(k: number): number {
    return k < this.end ? (this.src[k] as number) : 0;
  }

  /** Passes the digits at `i`; how many. */
  private digits(): number {
    const from = this.i;
    for (let c = this.at(this.i); c >= ZERO && c <= NINE; c = this.at(this.i)) this.i += 1;
    return this.i - from;
  }
}
