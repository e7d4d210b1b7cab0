// Answers a product's hottest requests on Node's own request event, before Fastify.
//
// A redirect through Fastify pays its routing, its request and reply objects, its hook chains
// (onRequest, onSend, onResponse: each run for every route of the server) and its child logger:
// more than the redirect's own work (issue 52). A product that can answer a request whole, with
// nothing that needs Fastify (no body, no validation beyond a pattern, no hook of its own), gives
// the server a handler here; a request it declines (returns false) goes to Fastify untouched, as
// every request did before. While the server closes, every request goes to Fastify, which answers
// 503 as it is set to (return503OnClosing).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** Answers the request and returns true, or returns false having written nothing. */
export type FrontHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

export class FrontDoor {
  private handler: FrontHandler | undefined;

  /** Requests the handler answered (the rest went to Fastify). */
  answered = 0;

  /** The client address and host of a request the handler sees, as Fastify would give them. */
  readonly origin: RawRequestOrigin;

  constructor(trustProxy: string[] | false) {
    this.origin = new RawRequestOrigin(trustProxy);
  }

  /** Sets the one handler that sees requests first (a later call replaces it). */
  use(handler: FrontHandler): void {
    this.handler = handler;
  }

  /** From now on Fastify answers every request (the server is closing). */
  close(): void {
    this.handler = undefined;
  }

  /**
   * Puts the front door before Fastify's request listener on `server`. Fastify made the server (its
   * timeouts and keep-alive settings stay its own); only the listener is wrapped.
   */
  install(server: Server): void {
    const [fastify, ...others] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    if (!fastify || others.length > 0) throw new Error('front door: expected exactly one request listener (Fastify\'s)');
    server.removeListener('request', fastify);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.handler !== undefined && this.handler(req, res)) {
        this.answered++;
        return;
      }
      fastify(req, res);
    });
  }
}

/**
 * A raw request's client address and host, as Fastify's request.ip and request.host give them
 * with the server's trustProxy (TRUSTED_PROXIES): X-Forwarded-For and X-Forwarded-Host are believed
 * only from a trusted peer.
 */
export class RawRequestOrigin {
  private readonly trusted: ((address: string, hop: number) => boolean) | undefined;

  constructor(trustProxy: string[] | false) {
    this.trusted = trustProxy && trustProxy.length > 0 ? proxyAddr.compile(trustProxy) : undefined;
  }

  ip(req: IncomingMessage): string {
    return this.trusted ? proxyAddr(req, this.trusted) : req.socket.remoteAddress ?? '';
  }

  host(req: IncomingMessage): string {
    const forwarded = req.headers['x-forwarded-host'];
    if (this.trusted && forwarded && this.trusted(req.socket.remoteAddress ?? '', 0)) return lastEntry(String(forwarded));
    return req.headers.host ?? '';
  }
}

/** The last of a header given several times (the one the nearest proxy added). */
function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',');
  return comma === -1 ? value.trim() : value.slice(comma + 1).trim();
}
