// A MaxMind DB (.mmdb) file looked up where it lies on disk, a page at a time.
// maxmind (and every other reader on npm) holds the whole file in the process's
// memory: 130 MB for DB-IP City Lite, most of a 200 MB budget. Here a lookup reads
// the tree nodes and the record it needs with pread, through a bounded cache of
// recently used pages; the kernel's page cache keeps the file itself, shared by
// every thread and process and not counted in any process's RSS. The format:
// https://maxmind.github.io/MaxMind-DB/ (a binary search tree over the address's
// bits, then a data section of typed values).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const PAGE = 4096;
const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'); // \xAB\xCD\xEF "MaxMind.com"
const METADATA_MAX = 128 * 1024; // the format puts the metadata within the file's last 128 KiB
const DATA_SEPARATOR = 16;

/** Bytes at an offset: of the file, a page at a time, or of a buffer. */
interface Bytes {
  u8(offset: number): number;
  /** An unsigned big-endian integer of 1 to 6 bytes. */
  uint(offset: number, length: number): number;
  slice(offset: number, length: number): Buffer;
}

/**
 * The file, read a page at a time, with recently used pages kept: a two-way set-associative cache (a
 * page may sit in one of two slots, chosen by its number; a new page takes the one of the two used
 * less recently). A Map kept in recency order cost more than the reads it saved once it held thousands.
 */
class PagedFile implements Bytes {
  private readonly fd: number;
  private readonly sets: number;
  // Slot 2s and 2s+1 form set s; pageOf[slot] is the page in it (-1: none), length[slot] its bytes read.
  private readonly pageOf: Int32Array;
  private readonly lengths: Int32Array;
  private readonly newer: Uint8Array; // per set: which of its two slots was used last
  private memory: Buffer | undefined; // taken at the first read; the kernel backs it as it is written
  // The page read last: a tree node's and a record's bytes are mostly within one.
  private lastIndex = -1;
  private lastPage: Buffer = Buffer.alloc(0);

  constructor(fd: number, maxPages: number) {
    this.fd = fd;
    this.sets = Math.max(1, Math.floor(maxPages / 2));
    this.pageOf = new Int32Array(this.sets * 2).fill(-1);
    this.lengths = new Int32Array(this.sets * 2);
    this.newer = new Uint8Array(this.sets);
  }

  u8(offset: number): number {
    const index = Math.floor(offset / PAGE);
    const page = index === this.lastIndex ? this.lastPage : this.page(index);
    return page[offset - index * PAGE] ?? 0;
  }

  uint(offset: number, length: number): number {
    let value = 0;
    for (let i = 0; i < length; i++) value = value * 256 + this.u8(offset + i);
    return value;
  }

  slice(offset: number, length: number): Buffer {
    const index = Math.floor(offset / PAGE);
    const start = offset - index * PAGE;
    if (start + length <= PAGE) return (index === this.lastIndex ? this.lastPage : this.page(index)).subarray(start, start + length);
    // Across a page boundary (a long string): read it whole, uncached.
    const bytes = Buffer.allocUnsafe(length);
    const read = readSync(this.fd, bytes, 0, length, offset);
    return read === length ? bytes : bytes.subarray(0, read);
  }

  private page(index: number): Buffer {
    const set = index % this.sets;
    let way: number;
    if (this.pageOf[set * 2] === index) way = 0;
    else if (this.pageOf[set * 2 + 1] === index) way = 1;
    else {
      way = 1 - this.newer[set]!;
      this.memory ??= Buffer.allocUnsafeSlow(this.sets * 2 * PAGE);
      const slot = set * 2 + way;
      this.pageOf[slot] = index;
      this.lengths[slot] = readSync(this.fd, this.memory, slot * PAGE, PAGE, index * PAGE);
    }
    this.newer[set] = way;
    const slot = set * 2 + way;
    const page = this.memory!.subarray(slot * PAGE, slot * PAGE + this.lengths[slot]!);
    this.lastIndex = index;
    this.lastPage = page;
    return page;
  }
}

class BufferBytes implements Bytes {
  private readonly buffer: Buffer;
  constructor(buffer: Buffer) {
    this.buffer = buffer;
  }
  u8(offset: number): number {
    return this.buffer[offset] ?? 0;
  }
  uint(offset: number, length: number): number {
    return this.buffer.readUIntBE(offset, length);
  }
  slice(offset: number, length: number): Buffer {
    return this.buffer.subarray(offset, offset + length);
  }
}

/** Decodes the data section's typed values (the format's section "Data Field Types"). */
class Decoder {
  private readonly bytes: Bytes;
  private readonly base: number; // where pointers count from: the data section's start

  constructor(bytes: Bytes, base: number) {
    this.bytes = bytes;
    this.base = base;
  }

  /** The value at an absolute offset, and the offset after it. */
  decode(offset: number): [unknown, number] {
    const control = this.bytes.u8(offset++);
    let type = control >> 5;
    if (type === 1) {
      const [pointer, next] = this.pointer(control, offset);
      return [this.decode(pointer)[0], next];
    }
    if (type === 0) type = 7 + this.bytes.u8(offset++);
    let size = control & 0x1f;
    if (size >= 29) {
      const extra = size - 28;
      size = [29, 285, 65_821][extra - 1]! + this.bytes.uint(offset, extra);
      offset += extra;
    }
    switch (type) {
      case 2: return [this.bytes.slice(offset, size).toString('utf8'), offset + size];
      case 3: return [this.bytes.slice(offset, 8).readDoubleBE(0), offset + 8];
      case 4: return [Buffer.from(this.bytes.slice(offset, size)), offset + size];
      case 5: case 6: case 9: case 10: return [this.unsigned(offset, size), offset + size];
      case 7: {
        const map: Record<string, unknown> = {};
        for (let i = 0; i < size; i++) {
          const [key, afterKey] = this.decode(offset);
          const [value, afterValue] = this.decode(afterKey);
          map[String(key)] = value;
          offset = afterValue;
        }
        return [map, offset];
      }
      // int32: shorter than 4 bytes only when its leading bytes are zero, so never negative.
      case 8: return [size === 0 ? 0 : size < 4 ? this.bytes.uint(offset, size) : this.bytes.slice(offset, 4).readInt32BE(0), offset + size];
      case 11: {
        const list: unknown[] = [];
        for (let i = 0; i < size; i++) {
          const [value, next] = this.decode(offset);
          list.push(value);
          offset = next;
        }
        return [list, offset];
      }
      case 14: return [size !== 0, offset];
      case 15: return [this.bytes.slice(offset, 4).readFloatBE(0), offset + 4];
      default: throw new Error(`mmdb: unknown data type ${type} at ${offset - 1}`);
    }
  }

  private pointer(control: number, offset: number): [number, number] {
    const size = (control >> 3) & 0x3;
    const high = control & 0x7;
    const value =
      size === 0 ? high * 0x100 + this.bytes.u8(offset)
      : size === 1 ? high * 0x10000 + this.bytes.uint(offset, 2) + 2048
      : size === 2 ? high * 0x1000000 + this.bytes.uint(offset, 3) + 526_336
      : this.bytes.uint(offset, 4);
    return [this.base + value, offset + size + 1];
  }

  private unsigned(offset: number, size: number): number | bigint {
    if (size === 0) return 0;
    if (size <= 6) return this.bytes.uint(offset, size);
    let value = 0n;
    for (const byte of this.bytes.slice(offset, size)) value = (value << 8n) | BigInt(byte);
    return value;
  }
}

export interface MmdbMetadata {
  nodeCount: number;
  recordSize: number;
  ipVersion: number;
  databaseType: string;
}

export class MmdbFile {
  readonly metadata: MmdbMetadata;
  private readonly fd: number;
  private readonly file: PagedFile;
  private readonly data: Decoder;
  private readonly treeSize: number;
  private readonly nodeBytes: number;

  /** Opens the file (its metadata read at once); `cachePages` pages of 4 KiB are kept between lookups. */
  constructor(path: string, cachePages: number) {
    this.fd = openSync(path, 'r');
    try {
      this.metadata = readMetadata(this.fd);
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
    const { nodeCount, recordSize } = this.metadata;
    if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new Error(`${path}: unsupported record size ${recordSize}`);
    this.nodeBytes = (recordSize * 2) / 8;
    this.treeSize = nodeCount * this.nodeBytes;
    this.file = new PagedFile(this.fd, cachePages);
    this.data = new Decoder(this.file, this.treeSize + DATA_SEPARATOR);
  }

  /** The record of the network holding the address (4 or 16 bytes, network order), or null. */
  get(address: Uint8Array): unknown {
    const bits = address.length * 8;
    const { nodeCount, ipVersion } = this.metadata;
    if (ipVersion === 4 && bits !== 32) return null;
    let node = 0;
    // An IPv4 address in an IPv6 tree is looked up as ::a.b.c.d, after 96 zero bits.
    for (let i = ipVersion === 6 && bits === 32 ? -96 : 0; i < bits && node < nodeCount; i++) {
      const bit = i < 0 ? 0 : (address[i >> 3]! >> (7 - (i & 7))) & 1;
      node = this.record(node, bit);
    }
    if (node <= nodeCount) return null; // nodeCount itself: no data for this address
    return this.data.decode(node - nodeCount + this.treeSize)[0];
  }

  close(): void {
    closeSync(this.fd);
  }

  private record(node: number, bit: number): number {
    const at = node * this.nodeBytes;
    switch (this.metadata.recordSize) {
      case 24: return this.file.uint(at + bit * 3, 3);
      // The middle byte's high half belongs to the left record, its low half to the right.
      case 28: return bit === 0 ? (this.file.u8(at + 3) >> 4) * 0x1000000 + this.file.uint(at, 3) : (this.file.u8(at + 3) & 0x0f) * 0x1000000 + this.file.uint(at + 4, 3);
      default: return this.file.uint(at + bit * 4, 4);
    }
  }
}

function readMetadata(fd: number): MmdbMetadata {
  const size = fstatSync(fd).size;
  const length = Math.min(size, METADATA_MAX);
  const tail = Buffer.allocUnsafe(length);
  readSync(fd, tail, 0, length, size - length);
  const at = tail.lastIndexOf(METADATA_MARKER);
  if (at < 0) throw new Error('not a MaxMind DB file (no metadata marker)');
  const [value] = new Decoder(new BufferBytes(tail), at + METADATA_MARKER.length).decode(at + METADATA_MARKER.length);
  const meta = value as Record<string, unknown>;
  return {
    nodeCount: Number(meta.node_count),
    recordSize: Number(meta.record_size),
    ipVersion: Number(meta.ip_version),
    databaseType: String(meta.database_type ?? ''),
  };
}
