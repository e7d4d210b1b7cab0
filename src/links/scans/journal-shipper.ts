// Ships sealed scan-journal segments to Kafka, in order: a segment is deleted
// only once everything in it was acknowledged. While Kafka is away it waits
// (backoff up to 5 s) and the segments stay on disk, bounded in bytes (the
// oldest are dropped beyond the bound, and counted). Runs in the shipper thread.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../platform/logger.ts';
import { isTransient } from '../../platform/actors/transient.ts';
import { isSealedSegment } from './journal-segments.ts';

export interface ShipperStats {
  shipped: number;
  dropped: number;
  sendFailures: number;
}

/** Keeps each produce request well under Kafka's default 1 MB message limit. */
const MAX_BATCH_BYTES = 512 * 1024;

/**
 * Splits records into batches of at most MAX_BATCH_BYTES of JSON (a fair measure of their Avro
 * size) and maxCount records. `sizeOf` gives a record's JSON length (the shipper knows it from the
 * journal line, so it need not serialise each record again).
 */
export function batchesOf<T>(records: readonly T[], maxCount: number, sizeOf: (record: T, index: number) => number = (r) => JSON.stringify(r).length): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const [index, record] of records.entries()) {
    const size = sizeOf(record, index);
    if (current.length > 0 && (bytes + size > MAX_BATCH_BYTES || current.length >= maxCount)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export class JournalShipper<T> {
  private readonly dir: string;
  private readonly send: (records: T[]) => Promise<void>;
  private readonly log: Logger;
  private readonly decode: (line: string) => T;
  private readonly maxBatch: number;
  private readonly maxBytes: number;
  private shipping: Promise<void> | undefined;
  private consecutiveFailures = 0;
  private nextAttemptAt = 0;
  private stopped = false;
  readonly stats: ShipperStats = { shipped: 0, dropped: 0, sendFailures: 0 };

  constructor(
    dir: string,
    send: (records: T[]) => Promise<void>,
    log: Logger,
    /** A line's record, throwing for a line that is not one (journal-line.ts). */
    decode: (line: string) => T,
    maxBatch = 1000,
    maxBytes = 1024 ** 3,
  ) {
    this.dir = dir;
    this.send = send;
    this.log = log;
    this.decode = decode;
    this.maxBatch = maxBatch;
    this.maxBytes = maxBytes;
  }

  /** Sealed segments waiting to be shipped, oldest first. */
  segments(): string[] {
    try {
      return readdirSync(this.dir).filter(isSealedSegment).sort().map((f) => join(this.dir, f));
    } catch {
      return [];
    }
  }

  /** Starts shipping unless a round is running or a failure asked to wait. */
  shipSoon(): void {
    if (this.stopped || Date.now() < this.nextAttemptAt) return;
    this.shipping ??= this.ship().finally(() => (this.shipping = undefined));
  }

  /** Ships what it can within `timeoutMs`, then stops. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.shipping;
    while (Date.now() < deadline && this.segments().length > 0 && this.consecutiveFailures === 0) await this.ship();
    this.stopped = true;
  }

  private async ship(): Promise<void> {
    this.enforceBound();
    for (const path of this.segments()) {
      if (this.stopped) return;
      const lines = readLines(path, this.decode);
      const records = lines.map((l) => l.record);
      try {
        for (const batch of batchesOf(records, this.maxBatch, (_r, i) => lines[i]!.bytes)) await this.sendOrIsolate(batch);
      } catch (err) {
        this.stats.sendFailures++;
        this.nextAttemptAt = Date.now() + Math.min(5000, 200 * 2 ** Math.min(this.consecutiveFailures, 5));
        if (this.consecutiveFailures++ === 0) this.log.warn({ err }, 'scan publishing failed; scans wait in the journal');
        return;
      }
      if (this.consecutiveFailures > 0) this.log.info('scan publishing recovered');
      this.consecutiveFailures = 0;
      this.stats.shipped += records.length;
      rmSync(path, { force: true });
    }
  }

  /**
   * Sends a batch. A failure that no retry can mend (a record that cannot be encoded, or is too
   * large for Kafka) must not hold up every later scan: the batch is split until the bad records
   * stand alone, and those are set aside (logged with their scanId and counted), the rest sent.
   */
  private async sendOrIsolate(batch: T[]): Promise<void> {
    try {
      await this.send(batch);
    } catch (err) {
      if (isTransient(err)) throw err;
      if (batch.length === 1) {
        this.stats.dropped++;
        this.log.error({ err, record: JSON.stringify(batch[0]).slice(0, 500) }, 'scan cannot be published; set aside');
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.sendOrIsolate(batch.slice(0, half));
      await this.sendOrIsolate(batch.slice(half));
    }
  }

  private enforceBound(): void {
    const segments = this.segments();
    let total = segments.reduce((sum, p) => sum + statSync(p).size, 0);
    for (const path of segments) {
      if (total <= this.maxBytes) break;
      const size = statSync(path).size;
      const lines = readLines(path, this.decode).length;
      rmSync(path, { force: true });
      total -= size;
      this.stats.dropped += lines;
      this.log.error({ lines }, 'scan journal over its bound: oldest scans dropped');
    }
  }
}

/** The records of a segment with their line lengths; a last line cut short by a crash mid-write is skipped. */
export function readLines<T>(path: string, decode: (line: string) => T): { record: T; bytes: number }[] {
  const records: { record: T; bytes: number }[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.length === 0) continue;
    try {
      records.push({ record: decode(line), bytes: line.length });
    } catch {
      // not a whole line
    }
  }
  return records;
}
