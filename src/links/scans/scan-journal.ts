// Scans are published after the redirect has been answered, never in its way.
// Each scan is first appended to a local journal (JSON lines, written every
// FLUSH_MS), journal segments are sealed every SEAL_MS and shipped to Kafka in
// order, and a segment is deleted only once Kafka has acknowledged all of it.
//
// So: if Kafka is away, redirects go on and scans wait on disk, then go out
// when it is back; if this process dies, the scans of the last FLUSH_MS not yet
// written are lost (nothing else), and the segments it left are shipped by the
// next process that starts on this spool directory. A segment that was shipped
// but not yet deleted when the process died is shipped again: consumers
// deduplicate by scanId, as they must for at-least-once anyway.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../platform/logger.ts';

export interface ScanJournalOptions<T> {
  dir: string;
  /** Sends a batch; resolves once Kafka acknowledged it. */
  send: (records: T[]) => Promise<void>;
  log: Logger;
  flushMs?: number;
  sealMs?: number;
  /** Largest batch sent at once. */
  maxBatch?: number;
  /** Journal bytes kept while Kafka is away; beyond it the oldest segments are dropped (and counted in the log). */
  maxBytes?: number;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export class ScanJournal<T> {
  private buffer: T[] = [];
  /** Records of the segment being written, and of sealed segments not yet shipped: shipped from memory, not re-read. */
  private current: T[] = [];
  private readonly sealed = new Map<string, T[]>();
  private fd: number | undefined;
  private segmentPath: string | undefined;
  private segmentHasData = false;
  private seq = 0;
  private readonly ownDir: string;
  private flushTimer: NodeJS.Timeout | undefined;
  private sealTimer: NodeJS.Timeout | undefined;
  private shipping: Promise<void> | undefined;
  private stopped = false;
  private consecutiveFailures = 0;
  private nextAttemptAt = 0;
  private readonly flushMs: number;
  private readonly sealMs: number;
  private readonly maxBatch: number;
  private readonly maxBytes: number;
  /** Counters for observability and tests. */
  readonly stats = { journaled: 0, shipped: 0, dropped: 0, sendFailures: 0 };

  constructor(private readonly options: ScanJournalOptions<T>) {
    this.flushMs = options.flushMs ?? 20;
    this.sealMs = options.sealMs ?? 100;
    this.maxBatch = options.maxBatch ?? 250;
    this.maxBytes = options.maxBytes ?? 1024 ** 3;
    // One directory per journal, named after the process so a later process knows when it is orphaned.
    this.ownDir = join(options.dir, `${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  /** Queues a scan; never blocks and never throws. */
  append(record: T): void {
    this.buffer.push(record);
  }

  start(): void {
    mkdirSync(this.ownDir, { recursive: true });
    this.adoptOrphans();
    this.openSegment();
    this.flushTimer = setInterval(() => this.flush(), this.flushMs);
    this.sealTimer = setInterval(() => {
      this.seal();
      this.shipSoon();
    }, this.sealMs);
    this.flushTimer.unref();
    this.sealTimer.unref();
    this.shipSoon();
  }

  /** Writes what is buffered, ships what it can within `timeoutMs`, and leaves the rest on disk. */
  async stop(timeoutMs = 5000): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sealTimer);
    this.flush();
    this.seal();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.sealedSegments().length > 0 && this.consecutiveFailures === 0) {
      await this.ship();
    }
    this.stopped = true;
    await this.shipping;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Scans journaled but not yet acknowledged by Kafka. */
  pendingSegments(): number {
    return this.sealedSegments().length + (this.segmentHasData ? 1 : 0);
  }

  private openSegment(): void {
    this.segmentPath = join(this.ownDir, `${Date.now()}-${String(this.seq++).padStart(8, '0')}.open`);
    this.fd = openSync(this.segmentPath, 'a');
    this.segmentHasData = false;
  }

  private flush(): void {
    if (this.buffer.length === 0 || this.fd === undefined) return;
    const records = this.buffer;
    this.buffer = [];
    try {
      writeSync(this.fd, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      this.segmentHasData = true;
      this.current.push(...records);
      this.stats.journaled += records.length;
    } catch (err) {
      // A full or broken disk: keep the scans in memory and try again at the next tick.
      this.buffer = records.concat(this.buffer);
      this.options.log.error({ err }, 'scan journal write failed');
    }
  }

  /** Closes the current segment (renamed .jsonl: ready to ship) and opens a new one. */
  private seal(): void {
    if (!this.segmentHasData || this.fd === undefined || !this.segmentPath) return;
    // No fsync: the journal covers the death of this process (the kernel still holds what was
    // written); a crash of the whole machine can lose the last seconds not yet flushed by the OS.
    // An fsync here would stall redirects for a disk flush ten times a second.
    closeSync(this.fd);
    const sealedPath = this.segmentPath.replace(/\.open$/, '.jsonl');
    renameSync(this.segmentPath, sealedPath);
    this.sealed.set(sealedPath, this.current);
    this.current = [];
    this.openSegment();
  }

  private sealedSegments(): string[] {
    try {
      return readdirSync(this.ownDir).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(this.ownDir, f));
    } catch {
      return [];
    }
  }

  /** Segments left by processes that died: moved into our directory, open ones sealed. */
  private adoptOrphans(): void {
    let entries: string[] = [];
    try {
      entries = readdirSync(this.options.dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      const pid = Number(entry.split('-')[0]);
      if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
      const dir = join(this.options.dir, entry);
      for (const file of readdirSync(dir)) {
        const target = join(this.ownDir, `0-adopted-${entry}-${file.replace(/\.open$/, '.jsonl')}`);
        try {
          renameSync(join(dir, file), target);
        } catch {
          // Another process adopted it first.
        }
      }
      rmSync(dir, { recursive: true, force: true });
      this.options.log.info({ from: entry }, 'adopted scan journal of a stopped process');
    }
  }

  private shipSoon(): void {
    // After a failure, wait (growing up to 5 s) instead of hammering a Kafka that is away.
    if (this.stopped || Date.now() < this.nextAttemptAt) return;
    this.shipping ??= this.ship().finally(() => (this.shipping = undefined));
  }

  private async ship(): Promise<void> {
    this.enforceBound();
    for (const path of this.sealedSegments()) {
      if (this.stopped) return;
      const events = this.sealed.get(path) ?? this.readSegment(path);
      try {
        for (let i = 0; i < events.length; i += this.maxBatch) {
          await this.options.send(events.slice(i, i + this.maxBatch));
          // Let requests run between batches: shipping must not stall the redirects.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (err) {
        this.stats.sendFailures++;
        this.nextAttemptAt = Date.now() + Math.min(5000, 200 * 2 ** Math.min(this.consecutiveFailures, 5));
        if (this.consecutiveFailures++ === 0) this.options.log.warn({ err }, 'scan publishing failed; scans wait in the journal');
        return;
      }
      if (this.consecutiveFailures > 0) this.options.log.info('scan publishing recovered');
      this.consecutiveFailures = 0;
      this.stats.shipped += events.length;
      rmSync(path, { force: true });
      this.sealed.delete(path);
    }
  }

  /** Records of a segment this process did not write (adopted from a stopped one). */
  private readSegment(path: string): T[] {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as T];
        } catch {
          return []; // a line cut short by a crash mid-write
        }
      });
  }

  /** Drops the oldest sealed segments while the journal is over its byte bound. */
  private enforceBound(): void {
    const segments = this.sealedSegments();
    let total = segments.reduce((sum, p) => sum + statSync(p).size, 0);
    for (const path of segments) {
      if (total <= this.maxBytes) break;
      const size = statSync(path).size;
      const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean).length;
      rmSync(path, { force: true });
      this.sealed.delete(path);
      total -= size;
      this.stats.dropped += lines;
      this.options.log.error({ lines }, 'scan journal over its bound: oldest scans dropped');
    }
  }
}
