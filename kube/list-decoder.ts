/**
 * A streaming decoder of a Kubernetes list response (`{"kind":..,"metadata":{..},"items":[..]}`):
 * fed the body chunk by chunk, it hands out each element of `items` as soon as its last byte
 * arrived, parsed on its own, and keeps the top-level `metadata`. So a list of every pod of a
 * large cluster (from the watch cache, which ignores `limit`; sizes in docs/scale.md) never
 * sits in memory whole: the peak is one chunk plus one item.
 *
 * It is a tokenizer of JSON structure only (strings, escapes, nesting); what it hands out is
 * parsed by JSON.parse, so malformed items are errors, never partial objects. Bounded: an
 * item over `maxItemBytes` is an error. With `itemMask` (json-mask.ts) each item is masked before
 * JSON.parse: only the fields the caller reads are built.
 */
import { JSON_BYTES } from './json-bytes.js';

// Module constants, not imported bindings: json-bytes.ts says why.
const { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } = JSON_BYTES;
import type { JsonMask } from './json-mask.js';

export interface ListMetadata {
  resourceVersion?: string;
  continue?: string;
}

type Capture = 'item' | 'metadata';

export class ListDecoder {
  private depth = 0;
  private inString = false;
  /** Backslashes just before the end of the previous chunk, inside a string. */
  private pendingBackslashes = 0;
  /** At depth 1, the next string is a key. */
  private expectKey = false;
  private readingKey = false;
  private keyParts: Buffer[] = [];
  private captureKeyFrom = 0;
  private key = '';
  /** Depth 2 is inside the top-level `items` array. */
  private inItems = false;
  private capture: Capture | undefined;
  private captureStart = 0;
  private captureParts: Buffer[] = [];
  private captureBytes = 0;
  private metadataValue: ListMetadata = {};
  private bytes = 0;
  private sawRoot = false;

  constructor(
    private readonly onItem: (item: unknown) => void,
    private readonly maxItemBytes = 16 * 1024 * 1024,
    private readonly itemMask?: JsonMask,
  ) {}

  get metadata(): ListMetadata {
    return this.metadataValue;
  }

  /** Bytes decoded so far. */
  get length(): number {
    return this.bytes;
  }

  write(chunk: Buffer): void {
    this.bytes += chunk.length;
    let i = 0;
    const n = chunk.length;
    if (this.capture !== undefined) this.captureStart = 0;
    if (this.readingKey) this.captureKeyFrom = 0;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const c = chunk[i] as number;
      if (c === QUOTE) {
        this.inString = true;
        this.pendingBackslashes = 0;
        if (this.depth === 1 && this.expectKey && this.capture === undefined) {
          this.readingKey = true;
          this.keyParts = [];
          this.captureKeyFrom = i + 1;
        }
        i += 1;
        continue;
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (this.depth === 0) {
          if (c !== OPEN_OBJECT) throw new Error('list response: not a JSON object');
          this.sawRoot = true;
          this.expectKey = true;
        } else if (this.capture === undefined) {
          if (this.depth === 1 && c === OPEN_ARRAY && this.key === 'items') this.inItems = true;
          else if (this.depth === 1 && c === OPEN_OBJECT && this.key === 'metadata') this.startCapture('metadata', i);
          else if (this.depth === 2 && this.inItems && c === OPEN_OBJECT) this.startCapture('item', i);
        }
        this.depth += 1;
        i += 1;
        continue;
      }
      if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        this.depth -= 1;
        if (this.depth < 0) throw new Error('list response: unbalanced JSON');
        if (this.capture === 'item' && this.depth === 2) this.endCapture(chunk, i);
        else if (this.capture === 'metadata' && this.depth === 1) this.endCapture(chunk, i);
        else if (this.depth === 1 && this.inItems) this.inItems = false;
        i += 1;
        continue;
      }
      if (c === COMMA && this.depth === 1) this.expectKey = true;
      i += 1;
    }
    if (this.capture !== undefined && this.captureStart < n) this.keepCapture(chunk.subarray(this.captureStart));
    if (this.readingKey && this.captureKeyFrom < n) this.keyParts.push(Buffer.from(chunk.subarray(this.captureKeyFrom)));
  }

  /** The body ended: checks it was one whole JSON object. */
  end(): ListMetadata {
    if (!this.sawRoot || this.depth !== 0 || this.inString) throw new Error('list response: truncated JSON');
    return this.metadataValue;
  }

  /** Inside a string from `i`: returns the index after its closing quote, or the chunk's end. */
  private skipString(chunk: Buffer, i: number): number {
    const n = chunk.length;
    let from = i;
    for (;;) {
      const q = chunk.indexOf(QUOTE, from);
      if (q < 0) {
        let run = 0;
        while (run < n - from && chunk[n - 1 - run] === BACKSLASH) run += 1;
        this.pendingBackslashes = run === n - from ? this.pendingBackslashes + run : run;
        return n;
      }
      let run = 0;
      while (q - 1 - run >= from && chunk[q - 1 - run] === BACKSLASH) run += 1;
      const total = run === q - from ? this.pendingBackslashes + run : run;
      this.pendingBackslashes = 0;
      if (total % 2 === 1) {
        from = q + 1;
        continue;
      }
      this.inString = false;
      if (this.readingKey) {
        this.readingKey = false;
        this.keyParts.push(chunk.subarray(this.captureKeyFrom, q));
        this.key = Buffer.concat(this.keyParts).toString('utf8');
        this.keyParts = [];
        this.expectKey = false;
      }
      return q + 1;
    }
  }

  private startCapture(kind: Capture, at: number): void {
    this.capture = kind;
    this.captureStart = at;
    this.captureParts = [];
    this.captureBytes = 0;
  }

  private keepCapture(part: Buffer): void {
    this.captureBytes += part.length;
    if (this.captureBytes > this.maxItemBytes) throw new Error(`list response: one item is larger than ${this.maxItemBytes} bytes`);
    this.captureParts.push(Buffer.from(part)); // a copy: the chunk itself is not kept
  }

  private endCapture(chunk: Buffer, at: number): void {
    const last = chunk.subarray(this.captureStart, at + 1);
    if (this.captureBytes + last.length > this.maxItemBytes) throw new Error(`list response: one item is larger than ${this.maxItemBytes} bytes`);
    const bytes = this.captureParts.length === 0 ? last : Buffer.concat([...this.captureParts, last]);
    const kind = this.capture;
    this.capture = undefined;
    this.captureParts = [];
    this.captureBytes = 0;
    const mask = kind === 'item' ? this.itemMask : undefined;
    const value: unknown = JSON.parse(mask === undefined ? bytes.toString('utf8') : mask.apply(bytes));
    if (kind === 'item') this.onItem(value);
    else {
      const m = value as { resourceVersion?: unknown; continue?: unknown };
      this.metadataValue = {
        ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
        ...(typeof m.continue === 'string' && m.continue !== '' ? { continue: m.continue } : {}),
      };
    }
  }
}
