// The last scans of one partition of `scans`, in order, for streams that resume: each scan's
// offset, timestamp, workspace and Avro bytes. Held compactly, since an ingress keeps every
// workspace's scans of several minutes: the bytes are copied into 256 KiB slabs (no object or
// buffer per scan) and the rest into plain arrays per slab, about 30 bytes a scan beside its
// Avro. Dropped from the oldest end, a slab at a time once all its scans are gone.

const SLAB_BYTES = 256 * 1024;

interface Slab {
  bytes: Buffer;
  used: number;
  offsets: number[];
  ats: number[];
  workspaces: string[];
  starts: number[];
}

export interface RingScan {
  offset: number;
  at: number;
  workspaceId: string;
  /** A view of the ring's bytes: decode it before the ring drops it. */
  value: Buffer;
}

export class ScanRing {
  private slabs: Slab[] = [];
  /** Index of the oldest scan in the first slab. */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(offset: number, at: number, workspaceId: string, value: Buffer): void {
    let slab = this.slabs.at(-1);
    if (!slab || slab.used + value.length > slab.bytes.length) {
      slab = { bytes: Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, value.length)), used: 0, offsets: [], ats: [], workspaces: [], starts: [] };
      this.slabs.push(slab);
    }
    value.copy(slab.bytes, slab.used);
    slab.starts.push(slab.used);
    slab.used += value.length;
    slab.offsets.push(offset);
    slab.ats.push(at);
    slab.workspaces.push(workspaceId);
    this.count++;
  }

  /** The oldest scan's offset and timestamp, if any. */
  oldest(): { offset: number; at: number } | undefined {
    const slab = this.slabs[0];
    if (!slab || this.head >= slab.offsets.length) return undefined;
    return { offset: slab.offsets[this.head]!, at: slab.ats[this.head]! };
  }

  /** Drops the oldest scan. */
  shift(): void {
    const slab = this.slabs[0];
    if (!slab) return;
    this.head++;
    this.count--;
    if (this.head >= slab.offsets.length) {
      this.slabs.shift();
      this.head = 0;
    }
  }

  /** Where the first scan after `offset` is: its slab and index (past the end when there is none). */
  private locate(offset: number): { s: number; i: number } {
    // Offsets only grow along the ring: the first slab whose last offset is past `offset`, then within it.
    let lo = 0;
    let hi = this.slabs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const slab = this.slabs[mid]!;
      if (slab.offsets[slab.offsets.length - 1]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    const slab = this.slabs[lo];
    if (!slab) return { s: lo, i: 0 };
    let a = lo === 0 ? this.head : 0;
    let b = slab.offsets.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (slab.offsets[mid]! <= offset) a = mid + 1;
      else b = mid;
    }
    return { s: lo, i: a };
  }

  /** The first scan after an offset (of any workspace): its offset and timestamp. */
  firstAfter(offset: number): { offset: number; at: number } | undefined {
    const { s, i } = this.locate(offset);
    const slab = this.slabs[s];
    if (!slab || i >= slab.offsets.length) return undefined;
    return { offset: slab.offsets[i]!, at: slab.ats[i]! };
  }

  /** The scans of a workspace after an offset, oldest first (found by offset, not by reading the ring from its start). */
  *after(offset: number, workspaceId: string): Generator<RingScan> {
    const start = this.locate(offset);
    for (let s = start.s; s < this.slabs.length; s++) {
      const slab = this.slabs[s]!;
      for (let i = s === start.s ? start.i : 0; i < slab.offsets.length; i++) {
        if (slab.workspaces[i] !== workspaceId) continue;
        const end = i + 1 < slab.starts.length ? slab.starts[i + 1]! : slab.used;
        yield { offset: slab.offsets[i]!, at: slab.ats[i]!, workspaceId, value: slab.bytes.subarray(slab.starts[i]!, end) };
      }
    }
  }
}
