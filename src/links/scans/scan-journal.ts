// Scans are published after the redirect has been answered, never in its way.
// Each scan is appended to a local journal (JSON lines, written every
// FLUSH_MS); segments are sealed every SEAL_MS and shipped to Kafka by the
// shipper thread (shipper-thread.ts), which deletes a segment only once Kafka
// has acknowledged all of it.
//
// So: if Kafka is away, redirects go on and scans wait on disk, then go out
// when it is back; if this process dies, the scans of the last FLUSH_MS not yet
// written are lost (nothing else), and the segments it left are shipped by the
// next ingress that runs on this journal directory. A journal is orphaned once
// no process accepts connections on its owner socket: the kernel accepts them
// for a live owner however long its event loop is stalled, and refuses them the
// moment it dies. (A directory without a socket, kept by an older version, is
// orphaned once its lease file has not been refreshed for SCAN_JOURNAL_LEASE_MS;
// the lease is still refreshed for such versions' sake.) A segment that was
// shipped but not yet deleted when the process died is shipped again:
// consumers deduplicate by scanId, as they must for at-least-once anyway.
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../platform/config.ts';
import type { LinksConfig } from '../config.ts';
import type { Logger } from '../../platform/logger.ts';
import { trackThreads } from '../../platform/metrics/thread-heaps.ts';
import { isSealedSegment, OPEN_SEGMENT, sealedName } from './journal-segments.ts';

export interface ScanJournalOptions<T> {
  dir: string;
  /** Configuration handed to the shipper thread (Kafka, registry, secrets). */
  config: Config & LinksConfig;
  log: Logger;
  flushMs?: number;
  sealMs?: number;
  /** A record's line (without its newline): journal-line.ts, whose lines the segments' names promise (journal-segments.ts). */
  encode: (record: T) => string;
}

/** A journal refreshes its lease this often; one not refreshed for SCAN_JOURNAL_LEASE_MS belongs to a stopped process. */
const LEASE_REFRESH_MS = 1000;

/** The socket its owner listens on while it lives. */
const OWNER_SOCKET = 'owner.sock';

/** Whether a process accepts connections on a journal directory's owner socket; undefined when it has none. */
function ownerListens(dir: string): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const socket = connect(join(dir, OWNER_SOCKET));
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ENOENT' ? undefined : false));
  });
}

/** Milliseconds since a journal directory's lease (or, lacking one, the directory) was last touched. */
function leaseAge(dir: string): number {
  for (const path of [join(dir, 'lease'), dir]) {
    try {
      return Date.now() - statSync(path).mtimeMs;
    } catch {
      // no lease yet: try the directory itself
    }
  }
  return 0;
}

export class ScanJournal<T> {
  private readonly options: ScanJournalOptions<T>;
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
  private leaseTimer: NodeJS.Timeout | undefined;
  private owner: Server | undefined;
  private shipperRestarts = 0;
  /** Whether the current shipper thread has loaded and listens (its `ready`). */
  private shipperReady = false;
  private readonly flushMs: number;
  private readonly sealMs: number;

  constructor(options: ScanJournalOptions<T>) {
    this.options = options;
    this.flushMs = options.flushMs ?? 20;
    this.sealMs = options.sealMs ?? 100;
    this.ownDir = join(options.dir, `${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  /** Queues a scan; never blocks and never throws. */
  append(record: T): void {
    this.buffer.push(record);
  }

  async start(): Promise<void> {
    mkdirSync(this.ownDir, { recursive: true });
    this.touchLease();
    await this.listenAsOwner();
    await this.adoptOrphans();
    this.openSegment();
    this.startShipper();
    this.flushTimer = setInterval(() => this.flush(), this.flushMs);
    this.sealTimer = setInterval(() => this.seal(), this.sealMs);
    // The lease says this journal is alive; orphans are looked for again now and then.
    let ticks = 0;
    this.leaseTimer = setInterval(() => {
      this.touchLease();
      if (++ticks % 5 === 0) void this.adoptOrphans();
    }, LEASE_REFRESH_MS);
    for (const timer of [this.flushTimer, this.sealTimer, this.leaseTimer]) timer.unref();
  }

  /** Says this journal is alive for as long as the process is (see the top of this file). */
  private async listenAsOwner(): Promise<void> {
    const owner = createServer((socket) => socket.destroy());
    try {
      await new Promise<void>((resolve, reject) => owner.once('error', reject).listen(join(this.ownDir, OWNER_SOCKET), resolve));
      owner.unref();
      this.owner = owner;
    } catch (err) {
      // A path longer than a socket's (about 100 bytes): the lease alone tells that this journal lives.
      this.options.log.warn({ err }, 'scan journal owner socket could not listen; its lease alone keeps it');
    }
  }

  private touchLease(): void {
    try {
      writeFileSync(join(this.ownDir, 'lease'), String(process.pid));
    } catch (err) {
      this.options.log.error({ err }, 'scan journal lease could not be refreshed');
    }
  }

  /** Writes what is buffered and lets the shipper send what it can within `timeoutMs`; the rest stays on disk. */
  async stop(timeoutMs = 5000): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sealTimer);
    clearInterval(this.leaseTimer);
    this.owner?.close();
    this.flush();
    this.seal();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.segmentPath && !this.segmentHasData) rmSync(this.segmentPath, { force: true });
    this.stopping = true;
    const shipper = this.shipper;
    if (!shipper) return;
    // A thread still loading has shipped nothing and holds nothing: what is journaled stays on disk
    // for the next start. Waiting for it to load, then to drain, could take the whole shutdown's time
    // on a busy machine (an ingress stopped just after its start).
    if (!this.shipperReady) {
      await shipper.terminate();
      return;
    }
    await Promise.race([
      new Promise<void>((resolve) => {
        shipper.on('message', (m: { type: string; stats?: unknown }) => {
          if (m.type !== 'stopped') return;
          this.options.log.info({ stats: m.stats }, 'scan shipper stopped');
          resolve();
        });
        shipper.postMessage({ type: 'stop', timeoutMs });
      }),
      new Promise((resolve) => setTimeout(resolve, timeoutMs + 2000)),
    ]);
    await shipper.terminate();
  }

  /** Journal segments not yet acknowledged by Kafka (sealed ones, and the open one if it has scans). */
  pendingSegments(): number {
    try {
      return readdirSync(this.ownDir).filter(isSealedSegment).length + (this.segmentHasData ? 1 : 0);
    } catch {
      return 0;
    }
  }

  /** Starts the shipper thread; if it ever exits, it is started again (with growing pauses). */
  private startShipper(): void {
    const env = Object.fromEntries(Object.entries(this.options.config).map(([k, v]) => [k, String(v)]));
    const shipper = new Worker(new URL('./shipper-thread.ts', import.meta.url), { workerData: { dir: this.ownDir, env } });
    this.shipper = shipper;
    this.shipperReady = false;
    const untrack = trackThreads('scan-shipper', () => [shipper]);
    shipper.on('message', (m: { type: string }) => {
      if (m.type !== 'ready') return;
      this.shipperRestarts = 0;
      this.shipperReady = true;
    });
    shipper.on('error', (err) => this.options.log.error({ err }, 'scan shipper thread failed'));
    shipper.on('exit', (code) => {
      untrack();
      if (this.stopping) return;
      // The segments are on disk; a new shipper picks them up.
      const delay = Math.min(30_000, 1000 * 2 ** this.shipperRestarts++);
      this.options.log.error({ code, restartInMs: delay }, 'scan shipper thread exited; restarting it');
      setTimeout(() => {
        if (!this.stopping) this.startShipper();
      }, delay).unref();
    });
  }

  private openSegment(): void {
    // The directory is made again should it have gone (removed by hand, or taken by an older version).
    mkdirSync(this.ownDir, { recursive: true });
    this.segmentPath = join(this.ownDir, `${Date.now()}-${String(this.seq++).padStart(8, '0')}${OPEN_SEGMENT}`);
    this.fd = openSync(this.segmentPath, 'a');
    this.segmentHasData = false;
  }

  private flush(): void {
    if (this.buffer.length === 0 || this.fd === undefined) return;
    const records = this.buffer;
    this.buffer = [];
    try {
      // Appended in a loop: map() and join() made an array and a copy more (0.8 µs a record against 0.5).
      let lines = '';
      for (const record of records) lines += this.options.encode(record) + '\n';
      writeSync(this.fd, lines);
      this.segmentHasData = true;
    } catch (err) {
      // A full or broken disk: keep the scans in memory and try again at the next tick.
      this.buffer = records.concat(this.buffer);
      this.options.log.error({ err }, 'scan journal write failed');
    }
  }

  /** Closes the current segment (renamed to its sealed name: ready to ship), tells the shipper, and opens a new one. */
  private seal(): void {
    if (!this.segmentHasData || this.fd === undefined || !this.segmentPath) return;
    // No fsync: the journal covers the death of this process (the kernel still holds what was
    // written); a crash of the whole machine can lose the last seconds not yet flushed by the OS.
    // An fsync here would stall redirects for a disk flush ten times a second.
    const [fd, path] = [this.fd, this.segmentPath];
    // Forgotten before anything can fail: a descriptor closed twice may by then be another file's.
    this.fd = undefined;
    closeSync(fd);
    try {
      renameSync(path, sealedName(path));
    } catch (err) {
      this.options.log.error({ err, path }, 'scan journal segment could not be sealed');
    }
    this.openSegment();
    this.shipper?.postMessage({ type: 'sealed' });
  }

  /** Segments left by processes that died: moved into our directory, open ones sealed. */
  private async adoptOrphans(): Promise<void> {
    let entries: string[] = [];
    try {
      entries = readdirSync(this.options.dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      try {
        await this.adopt(entry);
      } catch (err) {
        // Another process adopted that directory and removed it first.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.options.log.error({ err, entry }, 'scan journal of a stopped process could not be adopted');
      }
    }
  }

  /** Adopts one stopped process's directory, if it is one. */
  private async adopt(entry: string): Promise<void> {
    const dir = join(this.options.dir, entry);
    if (dir === this.ownDir || !statSync(dir).isDirectory()) return;
    const listens = await ownerListens(dir);
    if (listens || (listens === undefined && leaseAge(dir) < this.options.config.SCAN_JOURNAL_LEASE_MS)) return;
    for (const file of readdirSync(dir)) {
      if (file === 'lease' || file === OWNER_SOCKET) continue;
      const target = join(this.ownDir, `0-adopted-${entry}-${sealedName(file)}`);
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
