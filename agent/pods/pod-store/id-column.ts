/**
 * A column of ids (pod uids, drain ids) that keeps the two forms conndrain meets in 16 bytes
 * instead of a string each: the API server's uids (a UUID in lowercase hex, 36 characters)
 * and the drain ids the webhook writes (32 lowercase hex digits). A string of 32 or 36
 * characters costs 48 bytes of heap plus a pointer, 100 bytes a pod for the two. Any other
 * text (a stand-in's uid, a hand-written drain id, uppercase hex) is kept as it is, in a Map,
 * so every id reads back exactly as it was written.
 *
 * Lookups compare without building strings: `matches` parses the asked id into four words
 * and compares them with the slot's, and `hashOf(id)` and `hashAt(slot)` agree, so a slot
 * table can rehash from the column alone.
 */
import { PagedColumn } from './paged-column.js';
import { hashInt, hashString } from './slot-table.js';

const NONE = 0;
const HEX32 = 1;
const UUID = 2;
const TEXT = 3;

/** The four 32-bit words of the last id parsed (scratch: ids are parsed one at a time). */
const scratch = new Int32Array(4);

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/** Parses `id` into `scratch`; the form it has (HEX32, UUID), or TEXT when neither. */
function parse(id: string): number {
  let kind: number;
  if (id.length === 32) kind = HEX32;
  else if (id.length === 36 && id.charCodeAt(8) === 45 && id.charCodeAt(13) === 45 && id.charCodeAt(18) === 45 && id.charCodeAt(23) === 45) kind = UUID;
  else return TEXT;
  let word = 0;
  let digits = 0;
  for (let i = 0; i < id.length; i++) {
    if (kind === UUID && (i === 8 || i === 13 || i === 18 || i === 23)) continue;
    const n = nibble(id.charCodeAt(i));
    if (n < 0) return TEXT;
    word = (word << 4) | n;
    digits += 1;
    if ((digits & 7) === 0) {
      scratch[(digits >>> 3) - 1] = word;
      word = 0;
    }
  }
  return kind;
}

function hashWords(kind: number, w0: number, w1: number, w2: number, w3: number): number {
  return hashInt(hashInt(hashInt(hashInt(w0 ^ kind) ^ w1) ^ w2) ^ w3);
}

const HEX_DIGITS = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
/** The characters of the id being written back as text (one flat string, not a concatenation). */
const chars = new Uint8Array(36);

/** Writes the 8 hex digits of `word` into `chars` from `at`, skipping the UUID dashes' places. */
function writeHex(word: number, at: number, kind: number): number {
  let i = at;
  for (let shift = 28; shift >= 0; shift -= 4) {
    if (kind === UUID && (i === 8 || i === 13 || i === 18 || i === 23)) chars[i++] = 45;
    chars[i++] = HEX_DIGITS[(word >>> shift) & 15] as number;
  }
  return i;
}

/** The hash of an id, as `IdColumn.hashAt` gives it for a slot holding that id. */
export function hashId(id: string): number {
  const kind = parse(id);
  return kind === TEXT ? hashString(id) : hashWords(kind, scratch[0] as number, scratch[1] as number, scratch[2] as number, scratch[3] as number);
}

export class IdColumn {
  private readonly kinds = new PagedColumn((n) => new Uint8Array(n));
  private readonly words = new PagedColumn((n) => new Int32Array(n));
  private readonly texts = new Map<number, string>();

  get bytes(): number {
    return this.kinds.bytes + this.words.bytes;
  }

  ensure(need: number): void {
    this.kinds.ensure(need);
    this.words.ensure(need * 4);
  }

  /** Stores `id` at `slot` (undefined: none). */
  set(slot: number, id: string | undefined): void {
    this.texts.delete(slot);
    if (id === undefined) {
      this.kinds.set(slot, NONE);
      return;
    }
    const kind = parse(id);
    this.kinds.set(slot, kind);
    if (kind === TEXT) this.texts.set(slot, id);
    else for (let i = 0; i < 4; i++) this.words.set(slot * 4 + i, scratch[i] as number);
  }

  get(slot: number): string | undefined {
    const kind = this.kinds.get(slot);
    if (kind === NONE) return undefined;
    if (kind === TEXT) return this.texts.get(slot);
    let at = 0;
    for (let w = 0; w < 4; w++) at = writeHex(this.words.get(slot * 4 + w), at, kind);
    return String.fromCharCode.apply(null, chars.subarray(0, at) as unknown as number[]);
  }

  /** Whether `slot` holds exactly `id`. */
  matches(slot: number, id: string): boolean {
    const kind = this.kinds.get(slot);
    if (kind === NONE) return false;
    if (kind === TEXT) return this.texts.get(slot) === id;
    if (parse(id) !== kind) return false;
    const at = slot * 4;
    return this.words.get(at) === scratch[0] && this.words.get(at + 1) === scratch[1] && this.words.get(at + 2) === scratch[2] && this.words.get(at + 3) === scratch[3];
  }

  /** The hash of the id at `slot` (equal to `hashId` of it). */
  hashAt(slot: number): number {
    const kind = this.kinds.get(slot);
    if (kind === TEXT) return hashString(this.texts.get(slot) ?? '');
    const at = slot * 4;
    return hashWords(kind, this.words.get(at), this.words.get(at + 1), this.words.get(at + 2), this.words.get(at + 3));
  }
}
