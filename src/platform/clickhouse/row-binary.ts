// Rows for an insert in ClickHouse's RowBinary format: each row's values one
// after another in the columns' order, a String as its UTF-8 length (LEB128)
// and bytes, numbers little-endian. The sinks write scans this way instead of as
// JSONEachRow: no object and no JSON text per row in the worker (whose garbage
// collection was a third of its CPU), and no JSON for ClickHouse to parse. The
// official client encodes inserts only as JSON or text formats, so the encoding
// is ours: it needs only the four types our tables use.

/** A column of a table and how an event gives its value. */
export type Column<E> =
  | { name: string; type: 'String'; of: (event: E) => string }
  | { name: string; type: 'UInt8' | 'DateTime' | 'Int64'; of: (event: E) => number };

/** A String's UTF-8 length is at most three bytes per UTF-16 unit (a lone surrogate is written as U+FFFD: three). */
const MAX_UTF8_PER_UNIT = 3;
/** A length below this is one byte of LEB128. */
const ONE_BYTE = 128;

/** A growing buffer of RowBinary values. */
class RowBinaryWriter {
  private buffer: Buffer;
  private length = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  private varUInt(value: number): void {
    let rest = value;
    while (rest >= ONE_BYTE) {
      this.buffer[this.length++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / ONE_BYTE);
    }
    this.buffer[this.length++] = rest;
  }

  string(value: string): void {
    const most = value.length * MAX_UTF8_PER_UNIT;
    this.room(most + 5);
    // Short strings (ids, countries, most values): the length fits one byte whatever the text, so
    // the bytes are written once, straight after it, and their count put before them.
    if (most < ONE_BYTE) {
      const written = this.buffer.write(value, this.length + 1, 'utf8');
      this.buffer[this.length] = written;
      this.length += 1 + written;
      return;
    }
    this.varUInt(Buffer.byteLength(value, 'utf8'));
    this.length += this.buffer.write(value, this.length, 'utf8');
  }

  uint8(value: number): void {
    this.room(1);
    this.buffer.writeUInt8(value, this.length);
    this.length += 1;
  }

  /** A DateTime: seconds since the epoch, as UInt32. */
  uint32(value: number): void {
    this.room(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }

  int64(value: number): void {
    this.room(8);
    this.buffer.writeBigInt64LE(BigInt(value), this.length);
    this.length += 8;
  }

  /** The bytes written (a view of the buffer, not a copy). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** The events as RowBinary rows of `columns`. A value out of its type's range throws (RangeError). */
export function rowBinary<E>(columns: readonly Column<E>[], events: readonly E[]): Buffer {
  const writer = new RowBinaryWriter();
  for (const event of events) {
    for (const column of columns) {
      switch (column.type) {
        case 'String':
          writer.string(column.of(event));
          break;
        case 'UInt8':
          writer.uint8(column.of(event));
          break;
        case 'DateTime':
          writer.uint32(column.of(event));
          break;
        case 'Int64':
          writer.int64(column.of(event));
          break;
      }
    }
  }
  return writer.bytes();
}
