// The live streams the analytics pages listen to: the ingress's scan hub
// (live/scan-hub.ts: fed from the `scans` topic, resumable by Last-Event-ID on any
// ingress) narrowed to a workspace, or one link, and each scan cut down to what a
// page counts (no click ID, visitor, user agent, IP or full referrer URL: a shared page
// is public; an A/B scan's variant is its destination URL, which the page shows
// beside the link's own destination anyway), bots left out as the page's numbers
// leave them out. A stream ends when what allowed it no longer does (a share revoked
// or expired, its link deleted, its workspace off the API's plans, a key revoked, a
// session over), checked every few seconds; and when the ingress closes. A viewer who
// leaves while the stream is being opened gives its place back at once; a
// Last-Event-ID from further back than pageResumeWithin starts live.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { clientGone, streamScans, type EventStream } from '../live/event-stream.ts';
import { parseCursor } from '../live/live-cursor.ts';
import { liveScansUnavailable } from '../live/live-routes.ts';
import { InvalidResume, LiveScansUnavailable, type LiveScanEvent, type ScanHub } from '../live/scan-hub.ts';

/** Open page streams per workspace on one ingress (a shared page may have many viewers; each costs a socket). */
export const PAGE_STREAMS_PER_WORKSPACE = 200;

/** At most this many of the workspace's scans are replayed to a page stream that resumes. */
export const PAGE_RESUME_SCANS = 500;

/**
 * How far back a page stream's Last-Event-ID is resumed from: a browser coming back after a blip or
 * an ingress's shutdown, whose position may be a heartbeat old (a quiet page's moves only with its
 * heartbeats), so two heartbeats and 5 s (35 s by default), and PAGE_RESUME_SCANS. Anyone with a
 * share's URL may send any cursor: one further back starts live instead of replaying (and decoding)
 * the ring; the page's numbers reload with the page anyway.
 */
export const pageResumeWithin = (heartbeatMs: number) => ({ ms: 2 * heartbeatMs + 5_000, scans: PAGE_RESUME_SCANS });

/** A scan as a page's event: what it counts, or only its position for a bot's. */
function pageEvent(e: LiveScanEvent): string {
  const data = pageScan(e.data);
  // A bot's scan still moves the stream's position (an id-only event), so a resume does not see it again.
  return data === undefined ? `id: ${e.id}\n\n` : `id: ${e.id}\nevent: scan\ndata: ${data}\n\n`;
}

export interface PageStreamOptions {
  hub: ScanHub;
  log: Logger;
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** How often each stream's permission is checked again. */
  checkMs: number;
}

/** What a page counts of a scan (page-script.ts), from the hub's scan.created fields; undefined for a bot. */
export function pageScan(data: string): string | undefined {
  const s = JSON.parse(data) as { isBot: boolean; timestamp: string; shortId: string; country: string | null; device: string; browser: string | null; referrerHost: string | null; variant: string | null; trigger: string };
  if (s.isBot) return undefined;
  return JSON.stringify({ t: Date.parse(s.timestamp), shortId: s.shortId, country: s.country, device: s.device, browser: s.browser, referrer: s.referrerHost, variant: s.variant, trigger: s.trigger });
}

/** What lets a stream go on: checked again every few seconds, once per key for all the streams that share it (a public share's many viewers). */
export interface Permission {
  key: string;
  allowed: () => Promise<boolean>;
}

interface Open {
  stream: EventStream;
  permission: Permission;
}

export class PageStreams {
  private readonly options: PageStreamOptions;
  private readonly open = new Set<Open>();
  /** Streams per workspace, open or being opened: a place is taken before the first await, so concurrent opens cannot pass the bound together. */
  private readonly places = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private checking = false;
  private closed = false;

  constructor(options: PageStreamOptions) {
    this.options = options;
    this.timer = setInterval(() => void this.check(), options.checkMs);
    this.timer.unref();
  }

  /** Open page streams on this ingress. */
  get size(): number {
    return this.open.size;
  }

  private takePlace(workspaceId: string): boolean {
    const n = this.places.get(workspaceId) ?? 0;
    if (n >= PAGE_STREAMS_PER_WORKSPACE) return false;
    this.places.set(workspaceId, n + 1);
    return true;
  }

  private givePlace(workspaceId: string): void {
    const n = (this.places.get(workspaceId) ?? 1) - 1;
    if (n <= 0) this.places.delete(workspaceId);
    else this.places.set(workspaceId, n);
  }

  /** Answers the request with the stream of the workspace's (or link's) scans, while its permission holds. */
  async serve(request: FastifyRequest, reply: FastifyReply, scope: { workspaceId: string; linkId?: string }, permission: Permission): Promise<FastifyReply> {
    // HEAD (Fastify answers it with the GET route): the headers a stream would have, and no stream.
    if (request.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform').send();
    if (this.closed) throw liveScansUnavailable();
    if (!this.takePlace(scope.workspaceId)) {
      throw new ApiError(429, 'too_many_streams', `This workspace has ${PAGE_STREAMS_PER_WORKSPACE} open page streams on this server; try again later.`, undefined, { 'retry-after': '30' });
    }
    // Watched from before the first await: a viewer gone while the hub starts gives its place back.
    const gone = clientGone(reply);
    const lastId = request.headers['last-event-id'];
    // An id this service did not write (or of another topic's partitions) starts the stream live: a page reloads its numbers anyway.
    const resumeFrom = typeof lastId === 'string' ? parseCursor(lastId) : undefined;
    const filter = scope.linkId ? { linkId: scope.linkId } : {};
    const { hub, heartbeatMs, maxBufferedBytes } = this.options;
    const open = (from: typeof resumeFrom) => streamScans(reply, hub, {
      workspaceId: scope.workspaceId, filter, ...(from ? { resumeFrom: from } : {}), gone, heartbeatMs, maxBufferedBytes, format: pageEvent, replayWithin: pageResumeWithin(heartbeatMs),
    });
    let opened;
    try {
      opened = await open(resumeFrom).catch((err: unknown) => {
        if (!(err instanceof InvalidResume)) throw err;
        return open(undefined);
      });
    } catch (err) {
      this.givePlace(scope.workspaceId);
      throw err instanceof LiveScansUnavailable ? liveScansUnavailable() : err;
    }
    if (!opened) {
      this.givePlace(scope.workspaceId);
      return reply;
    }
    const { stream } = opened;
    const entry: Open = { stream, permission };
    this.open.add(entry);
    // Called at once if the stream has ended already (its client left just as it opened).
    stream.onEnd(() => {
      this.open.delete(entry);
      this.givePlace(scope.workspaceId);
    });
    // close() came while this one was being opened.
    if (this.closed) stream.end('shutdown');
    return reply;
  }

  /** Ends the streams whose permission is gone. */
  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const byKey = new Map<string, Open[]>();
      for (const entry of this.open) {
        if (!entry.stream.open) continue;
        const entries = byKey.get(entry.permission.key);
        if (entries) entries.push(entry);
        else byKey.set(entry.permission.key, [entry]);
      }
      for (const entries of byKey.values()) {
        const still = await entries[0]!.permission.allowed().catch((err: unknown) => {
          this.options.log.warn({ err }, 'analytics page stream: permission not checked');
          return true;
        });
        if (!still) for (const entry of entries) entry.stream.end('revoked');
      }
    } finally {
      this.checking = false;
    }
  }

  /** Ends every stream (the ingress is closing). */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const entry of [...this.open]) entry.stream.end('shutdown');
  }
}
