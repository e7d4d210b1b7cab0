// Server-Sent Events over a Fastify reply, and a hub subscription streamed through one.
//
// Exports:
//   EventStream            — new EventStream(reply, { heartbeatMs, maxBufferedBytes }): takes the
//                            response over (reply.hijack), writes the status, the headers already
//                            set on the reply (rate-limit headers…) and `retry:`. send({ id, event,
//                            data }) writes one event; end(reason) writes the final `end` event
//                            ({"reason": …}) and closes; onEnd(listener) hears every end, the
//                            client's going away included ('client_closed'). Between events a
//                            heartbeat every heartbeatMs: a comment, with the stream's position as
//                            `id:` when `position` is given (a quiet stream's Last-Event-ID stays new).
//                            A client whose unsent bytes pass maxBufferedBytes is dropped with
//                            end('slow_client'): nothing is buffered without bound.
//   streamScans(reply, hub, { workspaceId, filter, resumeFrom, heartbeatMs, maxBufferedBytes })
//                          — an EventStream of the hub's scans: an `id:` line at once (the position
//                            to resume from even before the first scan), a `resync` event when
//                            resumeFrom was older than the hub's ring ({"reason":"resume_expired"}),
//                            then one `scan` event per scan (id: the cursor, data: the scan's JSON).
//                            Resolves to { stream, subscription } once subscribed; the subscription
//                            is closed when the stream ends, and the stream ends (shutdown) when the
//                            hub's owner calls hub.endAll() as the ingress stops.
//
// Why no library: the SSE plugins for Fastify (fastify-sse-v2; @fastify/sse, still 0.x) take
// events through a Node stream, an async iterator or a send() that waits for the socket to drain.
// The hub hands one batch to a thousand streams at once and must never wait for one of them, so
// each would need a queue of its own beside the plugin; dropping a slow client needs the socket's
// own count of unsent bytes (writableLength), and the heartbeat must carry the stream's position
// (an `id:` line), which their comment heartbeats do not. The format itself is four kinds of line
// (html.spec.whatwg.org, 9.2).
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Cursor } from './live-cursor.ts';
import type { ScanFilter, ScanHub, Subscription } from './scan-hub.ts';

export interface EventStreamOptions {
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** The position a heartbeat carries as its `id:`. */
  position?: () => string;
  /** How long a client gets to take the final event before the socket is destroyed. */
  endGraceMs?: number;
}

export type EndReason = 'slow_client' | 'revoked' | 'shutdown' | 'client_closed' | 'expired' | (string & {});

export class EventStream {
  private readonly raw: ServerResponse;
  private readonly options: EventStreamOptions;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly listeners: Array<(reason: EndReason) => void> = [];
  private ended: EndReason | undefined;
  private wroteSince = false;

  constructor(reply: FastifyReply, options: EventStreamOptions) {
    this.options = options;
    this.raw = reply.raw;
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value as string | number | string[];
    this.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies (nginx) pass each event on at once.
      'x-accel-buffering': 'no',
    });
    this.raw.socket?.setNoDelay(true);
    this.raw.write(`retry: 1000\n\n`);
    this.raw.on('close', () => this.finish('client_closed'));
    this.heartbeat = setInterval(() => {
      if (this.wroteSince) {
        this.wroteSince = false;
        return;
      }
      const id = this.options.position?.();
      this.write(`: heartbeat\n${id ? `id: ${id}\n` : ''}\n`);
    }, options.heartbeatMs);
    this.heartbeat.unref();
  }

  get open(): boolean {
    return this.ended === undefined;
  }

  onEnd(listener: (reason: EndReason) => void): void {
    if (this.ended !== undefined) listener(this.ended);
    else this.listeners.push(listener);
  }

  /** Writes raw SSE text (whole events). */
  write(text: string): void {
    if (this.ended !== undefined) return;
    this.raw.write(text);
    this.wroteSince = true;
    if (this.raw.writableLength > this.options.maxBufferedBytes) this.end('slow_client');
  }

  send(event: { id?: string; event?: string; data?: string }): void {
    this.write(formatEvent(event));
  }

  /** The final event, then the end of the response. */
  end(reason: EndReason, detail?: Record<string, unknown>): void {
    if (this.ended !== undefined) return;
    this.raw.write(formatEvent({ event: 'end', data: JSON.stringify({ reason, ...detail }) }));
    this.raw.end();
    // A client that reads nothing never takes the final event: its socket goes after a grace.
    const grace = setTimeout(() => this.raw.destroy(), this.options.endGraceMs ?? 5000);
    grace.unref();
    this.raw.once('close', () => clearTimeout(grace));
    this.finish(reason);
  }

  private finish(reason: EndReason): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    clearInterval(this.heartbeat);
    for (const listener of this.listeners.splice(0)) listener(reason);
  }
}

export function formatEvent(event: { id?: string; event?: string; data?: string }): string {
  let out = '';
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  // Our data is JSON: one line. Any newline would start a field of its own.
  if (event.data !== undefined) out += `data: ${event.data.replace(/\r?\n|\r/g, '\ndata: ')}\n`;
  return `${out}\n`;
}

export interface ScanStreamOptions {
  workspaceId: string;
  filter: ScanFilter;
  resumeFrom?: Cursor;
  heartbeatMs: number;
  maxBufferedBytes: number;
}

/**
 * Subscribes first (an InvalidResume throws before anything is written, so the route can answer
 * 400), then takes the response over. Events the hub hands out before the stream exists wait in
 * a short list.
 */
export async function streamScans(reply: FastifyReply, hub: ScanHub, options: ScanStreamOptions): Promise<{ stream: EventStream; subscription: Subscription }> {
  let stream: EventStream | undefined;
  const early: string[] = [];
  const subscription = await hub.subscribe(options.workspaceId, options.filter, {
    onEvents: (events) => {
      let text = '';
      for (const e of events) text += `id: ${e.id}\nevent: scan\ndata: ${e.data}\n\n`;
      if (stream) stream.write(text);
      else early.push(text);
    },
    onShutdown: () => stream?.end('shutdown'),
  }, options.resumeFrom);
  const opened = new EventStream(reply, { heartbeatMs: options.heartbeatMs, maxBufferedBytes: options.maxBufferedBytes, position: () => subscription.cursor() });
  opened.onEnd(() => subscription.close());
  if (subscription.resumed === 'expired') opened.send({ event: 'resync', data: JSON.stringify({ reason: 'resume_expired' }) });
  for (const text of early) opened.write(text);
  // Where the stream stands now (after the replay): a client that sees no scan can still resume here.
  if (opened.open) opened.write(`id: ${subscription.cursor()}\n\n`);
  stream = opened;
  return { stream: opened, subscription };
}
