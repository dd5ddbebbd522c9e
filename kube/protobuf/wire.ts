/**
 * Reads protocol buffers' wire format (varints and length-delimited fields; the only two the
 * Kubernetes objects read here use) over a byte range, without copying it: a field is a tag
 * and a position. Bounded: a truncated field, a length past the range, a varint longer than
 * 10 bytes or a wire type this reader does not know throws a ProtobufError.
 */
export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

export class ProtoReader {
  /** The current field's number and wire type (after `next()` returned true). */
  field = 0;
  wire = 0;
  /** The end of the field the last `takeSpan()` moved past. */
  spanEnd = 0;
  private at: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.at = start;
  }

  /** Moves to the next field; false at the end of the range. */
  next(): boolean {
    if (this.at >= this.end) return false;
    const tag = this.varint();
    this.field = Math.floor(tag / 8);
    this.wire = tag % 8;
    if (this.field === 0) throw new ProtobufError('protobuf: field number 0');
    return true;
  }

  /** A varint as a number (exact up to 2^53; int64 fields here are counts and times). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.end) throw new ProtobufError('protobuf: truncated varint');
      const b = this.buf[this.at++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new ProtobufError('protobuf: varint longer than 10 bytes');
  }

  /** A varint field as a boolean. */
  bool(): boolean {
    this.expect(WIRE_VARINT);
    return this.varint() !== 0;
  }

  /** A varint field as an int32: its low 32 bits, signed (a negative one comes as 10 bytes). */
  int32(): number {
    this.expect(WIRE_VARINT);
    let low = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.at >= this.end) throw new ProtobufError('protobuf: truncated varint');
      const b = this.buf[this.at++] as number;
      if (shift < 32) low |= (b & 0x7f) << shift;
      if (b < 0x80) return low | 0;
    }
    throw new ProtobufError('protobuf: varint longer than 10 bytes');
  }

  /**
   * Moves past a length-delimited field and returns where it starts; `spanEnd` is where it
   * ends. No pair is allocated: this runs for every field of every watch event.
   */
  takeSpan(): number {
    this.expect(WIRE_LEN);
    const length = this.varint();
    const start = this.at;
    if (length > this.end - start) throw new ProtobufError(`protobuf: a field of ${length} bytes past the end of its message`);
    this.at = start + length;
    this.spanEnd = this.at;
    return start;
  }

  string(): string {
    const start = this.takeSpan();
    return this.buf.toString('utf8', start, this.spanEnd);
  }

  /** A reader over a length-delimited field (an embedded message). */
  message(): ProtoReader {
    const start = this.takeSpan();
    return new ProtoReader(this.buf, start, this.spanEnd);
  }

  /** Skips the current field, whatever its wire type. */
  skip(): void {
    switch (this.wire) {
      case WIRE_VARINT: this.varint(); return;
      case WIRE_LEN: this.takeSpan(); return;
      case WIRE_FIXED64: this.advance(8); return;
      case WIRE_FIXED32: this.advance(4); return;
      default: throw new ProtobufError(`protobuf: wire type ${this.wire} not read here (field ${this.field})`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.at) throw new ProtobufError('protobuf: truncated fixed-width field');
    this.at += n;
  }

  private expect(wire: number): void {
    if (this.wire !== wire) throw new ProtobufError(`protobuf: field ${this.field} has wire type ${this.wire}, expected ${wire}`);
  }
}
