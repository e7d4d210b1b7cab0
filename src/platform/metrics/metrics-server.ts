// The operations port of a process (METRICS_PORT, loopback by default): GET
// /metrics in Prometheus's text format, and for worker processes GET /readyz
// with their consumers' assignment and lag. Kept off the public port, so the
// ingress's API never shows its internals, and served by node:http alone, so a
// scrape never waits behind the API's hooks.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import { processRegistry } from './series.ts';

export interface Readiness {
  ready: boolean;
  [detail: string]: unknown;
}

export interface MetricsServerOptions {
  host: string;
  /** 0 takes any free port. */
  port: number;
  /** Series of this process whose values are read at scrape time (scrape-gauges.ts), in a registry of the server's own. */
  scrapeGauges?: (registry: Registry) => void;
  /** What GET /readyz answers (200 when ready, else 503); without it, /readyz is not served. */
  readiness?: () => Promise<Readiness>;
  log: Logger;
}

export interface MetricsServer {
  url: string;
  close: () => Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const own = new Registry();
  options.scrapeGauges?.(own);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const answer = async () => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
      if (path === '/metrics') {
        const registry = Registry.merge([processRegistry, own]);
        return send(200, registry.contentType, await registry.metrics());
      }
      if (path === '/readyz' && options.readiness) {
        const readiness = await options.readiness();
        return send(readiness.ready ? 200 : 503, 'application/json', JSON.stringify({ status: readiness.ready ? 'ready' : 'not_ready', ...readiness }));
      }
      return send(404, 'text/plain', 'not found\n');
    };
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    answer().catch((err: Error) => {
      options.log.warn({ err }, 'metrics request failed');
      if (!response.headersSent) send(500, 'text/plain', 'metrics failed\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  options.log.info({ url }, 'metrics listening');
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
