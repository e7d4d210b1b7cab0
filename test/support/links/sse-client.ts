// A Server-Sent Events client for tests, on node:http so a test can stop reading (a slow
// client) and see every field: it parses the stream as a browser's EventSource does
// (html.spec.whatwg.org 9.2: `id:` sets the last event id even on an event without data).
import { request, type IncomingMessage } from 'node:http';
import { freshIp } from '../ingress.ts';

export interface SseEvent {
  event: string;
  data: string;
  id: string;
}

export interface SseStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body of a refused request (status not 200), parsed when it is JSON, else its text. */
  body: any;
  events: SseEvent[];
  /** The data of each `scan` event, parsed. */
  scans: () => any[];
  /** The last `id:` seen, as an EventSource keeps it. */
  lastEventId: () => string;
  /** Waits until `test` holds for the events (fails after `ms`). */
  until: (test: (events: SseEvent[]) => boolean, ms?: number, what?: string) => Promise<void>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  pause: () => void;
  resume: () => void;
  close: () => void;
}

/** Opens `path` with the key as a bearer token; `key` undefined: without one (the analytics pages' streams, by cookie or token). */
export function openStream(baseUrl: string, path: string, key: string | undefined, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), accept: 'text/event-stream', 'x-forwarded-for': freshIp(), ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: SseEvent[] = [];
      let lastId = '';
      let buffer = '';
      let current = { event: '', data: [] as string[] };
      const waiters = new Set<() => void>();
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: unknown = text || undefined;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // an HTML page (the analytics pages' refusals): kept as text
          }
          resolve({ status: res.statusCode!, headers: res.headers, body } as SseStream);
        });
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data.length > 0) events.push({ event: current.event || 'message', data: current.data.join('\n'), id: lastId });
            current = { event: '', data: [] };
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') lastId = value;
          else if (field === 'event') current.event = value;
          else if (field === 'data') current.data.push(value);
        }
        for (const w of waiters) w();
      });
      resolve({
        status: 200,
        headers: res.headers,
        body: undefined,
        events,
        scans: () => events.filter((e) => e.event === 'scan').map((e) => JSON.parse(e.data)),
        lastEventId: () => lastId,
        until: (test, ms = 10_000, what = 'the events awaited') => new Promise<void>((ok, fail) => {
          if (test(events)) return ok();
          const check = () => {
            if (!test(events)) return;
            clearTimeout(timer);
            waiters.delete(check);
            ok();
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            fail(new Error(`no ${what} within ${ms} ms; got ${events.length} events: ${events.slice(-3).map((e) => `${e.event} ${e.data.slice(0, 80)}`).join(' | ')}`));
          }, ms);
          waiters.add(check);
        }),
        ended,
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}
