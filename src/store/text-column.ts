/**
 * A column of short texts (pod names: DNS-1123 names, ASCII) packed into pages of bytes, with a
 * position per slot, instead of a string each: a string costs its characters plus ~24 bytes
 * (header, pointer, rounding) and is one more object for every full collection to mark; here a
 * text costs its characters and 9 bytes. A text over 255 characters or not ASCII is kept as it
 * is, in a Map, so every text reads back exactly as it was written.
 *
 * Each text is stored after a 5-byte header (its slot, its length + 1) and never spans two
 * pages; a header whose length byte is 0 marks the unused tail of a page.
 * Texts are appended; a replaced text leaves its bytes behind. When the garbage passes a
 * quarter of the live bytes (and a page), the store is walked from its start and each live text
 * (its slot still points at it) moved down in place, then the emptied pages dropped: work
 * proportional to what was written since the last compaction (amortized, like a slot table's
 * rebuild), and no second copy of the store at any time.
 */
import { PagedColumn } from './paged-column.js';

const PAGE_BITS = 16;
const PAGE_BYTES = 1 << PAGE_BITS;
const HEADER = 5;
/** Byte 4 of a header is the length + 1, so 0 marks a page's unused tail. */
const MAX_PACKED = 254;

export class TextColumn {
  private readonly pages: Uint8Array[] = [];
  /** Where the next text goes: page * PAGE_BYTES + offset. */
  private end = 0;
  private live = 0;
  private garbage = 0;
  /**
   * Position + 1 of the slot's header (the text follows it in the same page); 0: no packed text
   * (undefined, or in `wide`). The header, not the text: an empty text whose header ends a page
   * would start at the next page.
   */
  private readonly positions = new PagedColumn((n) => new Int32Array(n));
  private readonly wide = new Map<number, string>();

  /** Bytes held: pages and positions. */
  get bytes(): number {
    return this.pages.length * PAGE_BYTES + this.positions.bytes;
  }

  /** Stores `text` at `slot` (undefined: none). */
  set(slot: number, text: string | undefined): void {
    this.positions.ensure(slot + 1);
    this.clear(slot);
    if (text === undefined) return;
    if (text.length > MAX_PACKED || !isAscii(text)) {
      this.wide.set(slot, text);
      return;
    }
    const at = this.reserve(HEADER + text.length);
    const page = this.pages[at >>> PAGE_BITS] as Uint8Array;
    const offset = at & (PAGE_BYTES - 1);
    page[offset] = slot & 255;
    page[offset + 1] = (slot >>> 8) & 255;
    page[offset + 2] = (slot >>> 16) & 255;
    page[offset + 3] = slot >>> 24;
    page[offset + 4] = text.length + 1;
    for (let i = 0; i < text.length; i++) page[offset + HEADER + i] = text.charCodeAt(i);
    this.positions.set(slot, at + 1);
    this.live += HEADER + text.length;
  }

  get(slot: number): string | undefined {
    const at = this.positions.get(slot) - 1;
    if (at < 0) return this.wide.get(slot);
    const page = this.pages[at >>> PAGE_BITS] as Uint8Array;
    const offset = (at & (PAGE_BYTES - 1)) + HEADER;
    // apply, not a spread: a spread of a typed array walks an iterator (an allocation per call, read per watch event).
    return String.fromCharCode.apply(null, page.subarray(offset, offset + (page[offset - 1] as number) - 1) as unknown as number[]);
  }

  /** Whether `slot` holds exactly `text` from its character `from` on (undefined: none), without building a string. */
  equals(slot: number, text: string | undefined, from = 0): boolean {
    const at = this.positions.get(slot) - 1;
    if (at < 0) {
      const wide = this.wide.get(slot);
      return text === undefined || wide === undefined ? wide === text : wide.length === text.length - from && text.startsWith(wide, from);
    }
    const page = this.pages[at >>> PAGE_BITS] as Uint8Array;
    const offset = (at & (PAGE_BYTES - 1)) + HEADER;
    if (text === undefined || text.length - from + 1 !== page[offset - 1]) return false;
    for (let i = from; i < text.length; i++) if (page[offset + i - from] !== text.charCodeAt(i)) return false;
    return true;
  }

  private clear(slot: number): void {
    this.wide.delete(slot);
    const at = this.positions.get(slot) - 1;
    if (at < 0) return;
    const length = HEADER - 1 + ((this.pages[at >>> PAGE_BITS] as Uint8Array)[(at & (PAGE_BYTES - 1)) + HEADER - 1] as number);
    this.live -= length;
    this.garbage += length;
    this.positions.set(slot, 0);
  }

  /** Where `length` bytes go: the end of the last page, a new page, or (much garbage) after a compaction. */
  private reserve(length: number): number {
    if (fit(this.end, length) + length > this.pages.length * PAGE_BYTES && this.garbage > PAGE_BYTES && this.garbage * 4 > this.live) this.compact();
    const at = fit(this.end, length);
    while (at + length > this.pages.length * PAGE_BYTES) this.pages.push(new Uint8Array(PAGE_BYTES));
    if (at !== this.end) this.markTail(this.end);
    this.end = at + length;
    return at;
  }

  /** Marks `at` as the start of its page's unused tail (when a header fits there). */
  private markTail(at: number): void {
    const offset = at & (PAGE_BYTES - 1);
    if (offset + HEADER <= PAGE_BYTES) (this.pages[at >>> PAGE_BITS] as Uint8Array)[offset + 4] = 0;
  }

  /**
   * Walks the store from its start (texts in position order, a page's tail after its last text
   * is skipped) and moves each live text down: a text keeps its order, so it only ever moves to
   * a position at or below its own. A text is live when its slot still points at it.
   */
  private compact(): void {
    let from = 0;
    let to = 0;
    while (from < this.end) {
      const page = this.pages[from >>> PAGE_BITS] as Uint8Array;
      const offset = from & (PAGE_BYTES - 1);
      const mark = offset + HEADER > PAGE_BYTES ? 0 : (page[offset + 4] as number);
      if (mark === 0) {
        from = ((from >>> PAGE_BITS) + 1) << PAGE_BITS;
        continue;
      }
      const length = HEADER - 1 + mark;
      const slot = ((page[offset] as number) | ((page[offset + 1] as number) << 8) | ((page[offset + 2] as number) << 16) | ((page[offset + 3] as number) << 24)) >>> 0;
      if (this.positions.get(slot) - 1 === from) {
        const at = fit(to, length);
        if (at !== to) this.markTail(to);
        if (at !== from) {
          (this.pages[at >>> PAGE_BITS] as Uint8Array).set(page.subarray(offset, offset + length), at & (PAGE_BYTES - 1));
          this.positions.set(slot, at + 1);
        }
        to = at + length;
      }
      from += length;
    }
    this.end = to;
    this.garbage = 0;
    this.pages.length = to === 0 ? 0 : ((to - 1) >>> PAGE_BITS) + 1;
  }
}

/** `at`, or the next page's start when `length` bytes from `at` would cross into it. */
function fit(at: number, length: number): number {
  return (at & (PAGE_BYTES - 1)) + length > PAGE_BYTES ? ((at >>> PAGE_BITS) + 1) << PAGE_BITS : at;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}
