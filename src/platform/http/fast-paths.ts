// Requests answered before Fastify routes them. A product adds a fast path for a
// request so frequent and so simple that Fastify's own per-request work (its
// request and reply objects, hooks, router, child logger) would be most of its
// cost: the redirect's common case, a cached link that simply redirects (issue
// 34: that work was more than bare Fastify's whole 302). A fast path either
// answers on Node's own request and response and returns true, or returns false
// having changed nothing, and Fastify handles the request as it always did.
// Once the server starts closing, every request goes to Fastify (which answers 503).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Logger } from '../logger.ts';
import { httpFastPathAnswers } from '../metrics/series.ts';

export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The options of Fastify's that shape its Node server (what Fastify's own getServerInstance applies). */
interface ServerFactoryOptions {
  http?: object;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

export class FastPaths {
  private readonly paths: FastPath[] = [];
  private closing = false;

  constructor(private readonly log: Logger) {}

  add(path: FastPath): void {
    this.paths.push(path);
  }

  /** From now on Fastify answers every request (the server is closing). */
  close(): void {
    this.closing = true;
  }

  /** Fastify's serverFactory: Node's HTTP server as Fastify would make it, asking the fast paths first. */
  readonly serverFactory = (handler: (req: IncomingMessage, res: ServerResponse) => void, options: ServerFactoryOptions): Server => {
    const server = createServer(options.http ?? {}, (req, res) => {
      if (!this.answered(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };

  private answered(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.closing) return false;
    for (const path of this.paths) {
      try {
        if (path(req, res)) {
          httpFastPathAnswers.inc();
          return true;
        }
      } catch (err) {
        // A bug, not a client's mistake: logged; Fastify answers the request unless it was answered.
        this.log.error({ err, url: req.url }, 'fast path failed');
        if (res.headersSent) {
          res.destroy();
          return true;
        }
        return false;
      }
    }
    return false;
  }
}

/** A raw request's client address and Host, exactly as Fastify's request.ip and request.host give them under the same trustProxy. */
export interface RawClient {
  ip: (req: IncomingMessage) => string;
  host: (req: IncomingMessage) => string;
}

export function rawClient(trustProxy: string[] | false): RawClient {
  const host = (req: IncomingMessage) => req.headers.host ?? '';
  if (trustProxy === false) return { ip: (req) => req.socket.remoteAddress ?? '', host };
  const trusted = proxyAddr.compile(trustProxy);
  return {
    ip: (req) => {
      const addresses = proxyAddr.all(req, trusted);
      return addresses[addresses.length - 1] ?? '';
    },
    host: (req) => {
      const forwarded = req.headers['x-forwarded-host'];
      if (typeof forwarded === 'string' && forwarded !== '' && trusted(req.socket.remoteAddress ?? '', 0)) {
        // The last entry when the header was sent more than once, as Fastify reads it.
        const comma = forwarded.lastIndexOf(',');
        return (comma === -1 ? forwarded : forwarded.slice(comma + 1)).trim();
      }
      return host(req);
    },
  };
}
