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
//   clientGone(reply)      — an AbortSignal aborted when the request's connection closes: taken
//                            before a stream's first await, so a client that leaves while its
//                            stream is being opened is seen (its `close` comes only once).
//   streamScans(reply, hub, { workspaceId, filter, resumeFrom, gone, heartbeatMs, maxBufferedBytes, format?, replayWithin? })
//                          — an EventStream of the hub's scans: an `id:` line at once (the position
//                            to resume from even before the first scan), a `resync` event when
//                            resumeFrom was older than the hub's ring ({"reason":"resume_expired"}),
//                            then one `scan` event per scan (id: the cursor, data: the scan's JSON;
//                            `format` writes each its own way). Resolves to { stream, subscription }
//                            once subscribed, or undefined when the client left meanwhile (`gone`:
//                            nothing is held, the caller gives back what it took). The subscription
//                            is closed when the stream ends, and the stream ends (shutdown) when the
//                            hub's owner calls hub.endAll() as the ingress stops, even mid-opening.
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
import { SubscribeAbandoned, type LiveScanEvent, type ScanFilter, type ScanHub, type SubscribeOptions, type Subscription } from './scan-hub.ts';

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
    // The client left before the stream was made (its `close` has come and gone): the stream ends now.
    if (this.raw.destroyed) this.finish('client_closed');
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

/** See the file's head. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  if (reply.raw.destroyed) controller.abort();
  else reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

export interface ScanStreamOptions {
  workspaceId: string;
  filter: ScanFilter;
  resumeFrom?: Cursor;
  /** clientGone(reply), taken before the caller's first await. */
  gone: AbortSignal;
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** One scan as SSE text (default: a `scan` event of the scan's JSON). */
  format?: (event: LiveScanEvent) => string;
  replayWithin?: SubscribeOptions['replayWithin'];
}

const scanEvent = (e: LiveScanEvent) => `id: ${e.id}\nevent: scan\ndata: ${e.data}\n\n`;

/**
 * Subscribes first (an InvalidResume throws before anything is written, so the route can answer
 * 400), then takes the response over. Events the hub hands out before the stream exists wait in
 * a short list.
 */
export async function streamScans(reply: FastifyReply, hub: ScanHub, options: ScanStreamOptions): Promise<{ stream: EventStream; subscription: Subscription } | undefined> {
  let stream: EventStream | undefined;
  let shutdown = false;
  const early: string[] = [];
  const format = options.format ?? scanEvent;
  let subscription: Subscription;
  try {
    subscription = await hub.subscribe(options.workspaceId, options.filter, {
      onEvents: (events) => {
        let text = '';
        for (const e of events) text += format(e);
        if (stream) stream.write(text);
        else early.push(text);
      },
      onShutdown: () => {
        shutdown = true;
        stream?.end('shutdown');
      },
    }, options.resumeFrom, { signal: options.gone, ...(options.replayWithin ? { replayWithin: options.replayWithin } : {}) });
  } catch (err) {
    if (!(err instanceof SubscribeAbandoned)) throw err;
    // Nobody to answer: the response is dropped (Fastify would try to send one to a closed socket).
    reply.hijack();
    reply.raw.destroy();
    return undefined;
  }
  const sub = subscription;
  const opened = new EventStream(reply, { heartbeatMs: options.heartbeatMs, maxBufferedBytes: options.maxBufferedBytes, position: () => sub.cursor() });
  opened.onEnd(() => sub.close());
  // endAll came while the subscription was being made: this stream ends as the others did.
  if (shutdown) opened.end('shutdown');
  if (sub.resumed === 'expired') opened.send({ event: 'resync', data: JSON.stringify({ reason: 'resume_expired' }) });
  for (const text of early) opened.write(text);
  // Where the stream stands now (after the replay): a client that sees no scan can still resume here.
  if (opened.open) opened.write(`id: ${sub.cursor()}\n\n`);
  stream = opened;
  return { stream: opened, subscription: sub };
}
