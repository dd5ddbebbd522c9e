/**
 * A column of ids (pod uids, drain ids) that keeps the two forms conndrain meets in 16 bytes
 * instead of a string each: the API server's uids (a UUID in lowercase hex, 36 characters)
 * and the drain ids the webhook writes (32 lowercase hex digits). A string of 32 or 36
 * characters costs 48 bytes of heap plus a pointer, 100 bytes a pod for the two. Any other
 * text (a stand-in's uid, a hand-written drain id, uppercase hex) is kept as it is, in a Map,
 * so every id reads back exactly as it was written.
 *
 * Lookups compare without building strings: `matches` parses the asked id into four words
 * and compares them with the slot's, and `hashId(id)` and `hashAt(slot)` agree, so a slot
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

/** Each character code's hex value (lowercase only), -1 for any other. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d++) NIBBLE['0123456789abcdef'.charCodeAt(d)] = d;
/** Where the 32 hex digits sit in each form. */
const HEX32_DIGITS = Int8Array.from({ length: 32 }, (_, k) => k);
const UUID_DIGITS = Int8Array.from({ length: 32 }, (_, k) => k + (k >= 8 ? 1 : 0) + (k >= 12 ? 1 : 0) + (k >= 16 ? 1 : 0) + (k >= 20 ? 1 : 0));

/** The id in `scratch` and its form: a lookup parses its key once for the hash and again for each probe's comparison. */
let lastId: string | undefined;
let lastKind = TEXT;

/** Parses `id` into `scratch`; the form it has (HEX32, UUID), or TEXT when neither. */
function parse(id: string): number {
  if (id === lastId) return lastKind;
  lastKind = parseWords(id);
  lastId = id;
  return lastKind;
}

function parseWords(id: string): number {
  let kind: number;
  let digits: Int8Array;
  if (id.length === 32) {
    kind = HEX32;
    digits = HEX32_DIGITS;
  } else if (id.length === 36 && id.charCodeAt(8) === 45 && id.charCodeAt(13) === 45 && id.charCodeAt(18) === 45 && id.charCodeAt(23) === 45) {
    kind = UUID;
    digits = UUID_DIGITS;
  } else return TEXT;
  for (let w = 0; w < 4; w++) {
    let word = 0;
    for (let k = w * 8; k < w * 8 + 8; k++) {
      const code = id.charCodeAt(digits[k] as number);
      const n = code < 128 ? (NIBBLE[code] as number) : -1;
      if (n < 0) return TEXT;
      word = (word << 4) | n;
    }
    scratch[w] = word;
  }
  return kind;
}

function hashWords(kind: number, w0: number, w1: number, w2: number, w3: number): number {
  return hashInt(hashInt(hashInt(hashInt(w0 ^ kind) ^ w1) ^ w2) ^ w3);
}

/** The text of an id being written back (latin1: one flat string, made natively). */
const text = Buffer.alloc(36);
const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** Writes the 32 hex digits of `words` (4 from `at`) into `text` at the places of `kind`; the length. */
function writeText(kind: number, words: PagedColumn<Int32Array>, at: number): number {
  const digits = kind === UUID ? UUID_DIGITS : HEX32_DIGITS;
  if (kind === UUID) text[8] = text[13] = text[18] = text[23] = 45;
  for (let w = 0; w < 4; w++) {
    const word = words.get(at + w);
    for (let k = 0; k < 8; k++) text[digits[w * 8 + k] as number] = HEX_CODES[(word >>> (28 - 4 * k)) & 15] as number;
  }
  return kind === UUID ? 36 : 32;
}

/** The hash of an id, as `IdColumn.hashAt` gives it for a slot holding that id. */
export function hashId(id: string): number {
  const kind = parse(id);
  return kind === TEXT ? hashString(id) : hashWords(kind, scratch[0] as number, scratch[1] as number, scratch[2] as number, scratch[3] as number);
}

/** Texts built by `get` kept per slot in a direct-mapped cache of this many entries: a draining pod's views are built again and again. */
const TEXT_CACHE = 1024;

export class IdColumn {
  private readonly cachedSlot = new Int32Array(TEXT_CACHE).fill(-1);
  private readonly cachedText = new Array<string>(TEXT_CACHE).fill('');
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
    if (this.cachedSlot[slot % TEXT_CACHE] === slot) this.cachedSlot[slot % TEXT_CACHE] = -1;
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
    const line = slot % TEXT_CACHE;
    if (this.cachedSlot[line] === slot) return this.cachedText[line];
    const built = text.toString('latin1', 0, writeText(kind, this.words, slot * 4));
    this.cachedSlot[line] = slot;
    this.cachedText[line] = built;
    return built;
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
