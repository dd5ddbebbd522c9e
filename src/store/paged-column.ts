/**
 * A column of the pod store: one number per slot, in typed-array pages of 4,096 slots. Growing
 * adds a page and copies nothing, so the store never holds a column twice while it grows (a
 * doubled array would, until the old one is collected) and never reserves more than one page
 * beyond the slots in use (a doubled array reserves up to as many again: 112,000 slots at
 * 150,000 pods).
 */
export const PAGE_BITS = 12;
export const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;

type TypedArray = Int32Array | Uint8Array | Float64Array;

export class PagedColumn<A extends TypedArray> {
  private readonly pages: A[] = [];

  /** `make(n)`: a zeroed page of n entries (a slot never written reads 0). */
  constructor(private readonly make: (n: number) => A) {}

  /** Slots the pages hold (a multiple of the page size). */
  get capacity(): number {
    return this.pages.length * PAGE_SIZE;
  }

  get bytes(): number {
    return this.pages.reduce((n, page) => n + page.byteLength, 0);
  }

  /** Makes room for slots 0 .. need - 1. */
  ensure(need: number): void {
    while (this.capacity < need) this.pages.push(this.make(PAGE_SIZE));
  }

  get(slot: number): number {
    return (this.pages[slot >>> PAGE_BITS] as A)[slot & PAGE_MASK] as number;
  }

  set(slot: number, value: number): void {
    (this.pages[slot >>> PAGE_BITS] as A)[slot & PAGE_MASK] = value;
  }
}
