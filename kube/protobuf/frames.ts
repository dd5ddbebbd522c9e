/**
 * Splits a protobuf watch stream into frames: each a 4-byte big-endian length, then that many
 * bytes (apimachinery's length-delimited framer). A frame that spans chunks is gathered in one
 * buffer reused from frame to frame; the Buffer handed to `onFrame` is valid only during the
 * call. Bounded: a frame over `max` bytes is an error.
 */
const HEADER = 4;
/** A gathering buffer larger than this is let go once its frame is out. */
const KEEP_BUFFER_BYTES = 1 << 20;

export class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0);
  private size = 0;

  constructor(
    private readonly onFrame: (frame: Buffer) => void,
    private readonly max: number,
  ) {}

  write(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      if (this.size === 0 && chunk.length - from >= HEADER) {
        const length = chunk.readUInt32BE(from);
        this.check(length);
        if (chunk.length - from - HEADER >= length) {
          this.onFrame(chunk.subarray(from + HEADER, from + HEADER + length));
          from += HEADER + length;
          continue;
        }
      }
      from = this.gather(chunk, from);
    }
  }

  /** Adds bytes of `chunk` from `from` to the partial frame, hands it on when whole; returns where it stopped. */
  private gather(chunk: Buffer, from: number): number {
    const need = this.size < HEADER ? HEADER : HEADER + this.pending.readUInt32BE(0);
    const take = Math.min(need - this.size, chunk.length - from);
    this.ensure(this.size + take);
    chunk.copy(this.pending, this.size, from, from + take);
    this.size += take;
    if (this.size === HEADER) this.check(this.pending.readUInt32BE(0));
    if (this.size >= HEADER && this.size === HEADER + this.pending.readUInt32BE(0)) {
      const frame = this.pending.subarray(HEADER, this.size);
      this.size = 0;
      try {
        this.onFrame(frame);
      } finally {
        if (this.pending.length > KEEP_BUFFER_BYTES) this.pending = Buffer.alloc(0);
      }
    }
    return from + take;
  }

  private ensure(bytes: number): void {
    if (bytes <= this.pending.length) return;
    const grown = Buffer.allocUnsafe(Math.max(bytes, this.pending.length * 2, 64 * 1024));
    this.pending.copy(grown, 0, 0, this.size);
    this.pending = grown;
  }

  private check(length: number): void {
    if (length > this.max) throw new Error(`watch: one event is larger than ${this.max} bytes`);
  }
}
