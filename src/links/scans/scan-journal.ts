// Scans are published after the redirect has been answered, never in its way.
// Each scan is appended to a local journal (JSON lines, written every
// FLUSH_MS); segments are sealed every SEAL_MS and shipped to Kafka by the
// shipper thread (shipper-thread.ts), which deletes a segment only once Kafka
// has acknowledged all of it.
//
// So: if Kafka is away, redirects go on and scans wait on disk, then go out
// when it is back; if this process dies, the scans of the last FLUSH_MS not yet
// written are lost (nothing else), and the segments it left are shipped by the
// next process that starts on this journal directory. A segment that was
// shipped but not yet deleted when the process died is shipped again:
// consumers deduplicate by scanId, as they must for at-least-once anyway.
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../../platform/threads/start-ts-worker.ts';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';

export interface ScanJournalOptions {
  dir: string;
  /** Configuration handed to the shipper thread (Kafka, registry, secrets). */
  config: Config;
  log: Logger;
  flushMs?: number;
  sealMs?: number;
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
  private fd: number | undefined;
  private segmentPath: string | undefined;
  private segmentHasData = false;
  private seq = 0;
  private readonly ownDir: string;
  private flushTimer: NodeJS.Timeout | undefined;
  private sealTimer: NodeJS.Timeout | undefined;
  private shipper: Worker | undefined;
  private stopping = false;
  private readonly flushMs: number;
  private readonly sealMs: number;
  readonly stats = { journaled: 0 };

  constructor(private readonly options: ScanJournalOptions) {
    this.flushMs = options.flushMs ?? 20;
    this.sealMs = options.sealMs ?? 100;
    // One directory per journal, named after the process so a later process knows when it is orphaned.
    this.ownDir = join(options.dir, `${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  /** Queues a scan; never blocks and never throws. */
  append(record: T): void {
    this.buffer.push(record);
  }

  async start(): Promise<void> {
    mkdirSync(this.ownDir, { recursive: true });
    this.adoptOrphans();
    this.openSegment();
    await this.startShipper();
    this.flushTimer = setInterval(() => this.flush(), this.flushMs);
    this.sealTimer = setInterval(() => this.seal(), this.sealMs);
    this.flushTimer.unref();
    this.sealTimer.unref();
  }

  /** Writes what is buffered and lets the shipper send what it can within `timeoutMs`; the rest stays on disk. */
  async stop(timeoutMs = 5000): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sealTimer);
    this.flush();
    this.seal();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.segmentPath && !this.segmentHasData) rmSync(this.segmentPath, { force: true });
    this.stopping = true;
    const shipper = this.shipper;
    if (!shipper) return;
    await Promise.race([
      new Promise<void>((resolve) => {
        shipper.on('message', (m: { type: string }) => m.type === 'stopped' && resolve());
        shipper.postMessage({ type: 'stop', timeoutMs });
      }),
      new Promise((resolve) => setTimeout(resolve, timeoutMs + 2000)),
    ]);
    await shipper.terminate();
  }

  /** Journal segments not yet acknowledged by Kafka (sealed ones, and the open one if it has scans). */
  pendingSegments(): number {
    try {
      return readdirSync(this.ownDir).filter((f) => f.endsWith('.jsonl')).length + (this.segmentHasData ? 1 : 0);
    } catch {
      return 0;
    }
  }

  private async startShipper(): Promise<void> {
    const env = Object.fromEntries(Object.entries(this.options.config).map(([k, v]) => [k, String(v)]));
    const shipper = startTsWorker(new URL('./shipper-thread.ts', import.meta.url), { dir: this.ownDir, env });
    this.shipper = shipper;
    await new Promise<void>((resolve, reject) => {
      shipper.once('message', (m: { type: string }) => (m.type === 'ready' ? resolve() : undefined));
      shipper.once('error', reject);
    });
    shipper.on('error', (err) => this.options.log.error({ err }, 'scan shipper thread failed'));
    shipper.on('exit', (code) => {
      if (this.stopping) return;
      // The segments are on disk; a new shipper picks them up.
      this.options.log.error({ code }, 'scan shipper thread exited; restarting it');
      setTimeout(() => void this.startShipper().catch((err) => this.options.log.error({ err }, 'scan shipper restart failed')), 1000);
    });
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
      this.stats.journaled += records.length;
    } catch (err) {
      // A full or broken disk: keep the scans in memory and try again at the next tick.
      this.buffer = records.concat(this.buffer);
      this.options.log.error({ err }, 'scan journal write failed');
    }
  }

  /** Closes the current segment (renamed .jsonl: ready to ship), tells the shipper, and opens a new one. */
  private seal(): void {
    if (!this.segmentHasData || this.fd === undefined || !this.segmentPath) return;
    // No fsync: the journal covers the death of this process (the kernel still holds what was
    // written); a crash of the whole machine can lose the last seconds not yet flushed by the OS.
    // An fsync here would stall redirects for a disk flush ten times a second.
    closeSync(this.fd);
    renameSync(this.segmentPath, this.segmentPath.replace(/\.open$/, '.jsonl'));
    this.openSegment();
    this.shipper?.postMessage({ type: 'sealed' });
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
      if (!statSync(dir).isDirectory()) continue;
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
}
