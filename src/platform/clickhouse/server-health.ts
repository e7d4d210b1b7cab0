// One ClickHouse server of CLICKHOUSE_URL and whether it serves: a server that refused a connection
// or left a ping unanswered is marked down, and probed in the background until it answers again.
// A hung server (SIGSTOP, a frozen VM) accepts connections and answers nothing, so a request's own
// failure would come only after its whole timeout: requests on it are watched by pings instead
// (watched), and a server that misses one is left within PING_AFTER_MS + PING_TIMEOUT_MS.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { ClickHouseClient } from '@clickhouse/client';

/** How long a request runs before its server is asked whether it still answers, and again that often. */
export const PING_AFTER_MS = 500;
/** How long a ping may take before the server counts as hung. */
export const PING_TIMEOUT_MS = 1000;
/** How often a server marked down is asked whether it is back. */
const PROBE_EVERY_MS = 500;

/** The server could not be reached, or did not answer a ping: the request may go to another server. */
export class ServerUnavailable extends Error {
  override name = 'ServerUnavailable';
  readonly url: string;
  /** Whether the request surely never reached the server (the connection was refused): then even a write may be sent elsewhere. */
  readonly notSent: boolean;
  constructor(url: string, reason: string, notSent: boolean, cause?: unknown) {
    super(`ClickHouse server ${url} is unavailable: ${reason}`, { cause });
    this.url = url;
    this.notSent = notSent;
  }
}

/** A transport failure, as the client reports one: refused, reset, or cut while the request was out. */
export function transportFailure(err: unknown): { notSent: boolean } | undefined {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ECONNREFUSED' || e?.code === 'EHOSTUNREACH' || e?.code === 'ENETUNREACH') return { notSent: true };
  if (e?.code === 'ECONNRESET' || e?.code === 'EPIPE' || e?.code === 'ETIMEDOUT' || e?.message === 'socket hang up') return { notSent: false };
  return undefined;
}

export class ServerHealth {
  readonly url: string;
  readonly client: ClickHouseClient;
  private readonly ca: Buffer | undefined;
  private downSince: number | undefined;
  private probe: NodeJS.Timeout | undefined;
  private ping: Promise<boolean> | undefined;

  constructor(url: string, client: ClickHouseClient, ca?: Buffer) {
    this.url = url.replace(/\/+$/, '');
    this.client = client;
    this.ca = ca;
  }

  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** Marks the server down and probes it until it answers a ping. */
  markDown(): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.probe = setInterval(() => {
      void this.answersPing().then((ok) => {
        if (ok) this.markUp();
      });
    }, PROBE_EVERY_MS);
    this.probe.unref();
  }

  private markUp(): void {
    clearInterval(this.probe);
    this.probe = undefined;
    this.downSince = undefined;
  }

  /** GET /ping within PING_TIMEOUT_MS; one at a time per server, shared by whoever asks meanwhile. */
  answersPing(): Promise<boolean> {
    this.ping ??= pingOnce(`${this.url}/ping`, this.ca).finally(() => {
      this.ping = undefined;
    });
    return this.ping;
  }

  /**
   * Runs `work` (a request to this server) under a watch: after PING_AFTER_MS, and as often again, the
   * server is pinged; one that does not answer (or was marked down meanwhile) is marked down and the
   * request aborted with ServerUnavailable. A transport failure marks it down too.
   */
  async watched<T>(work: (signal: AbortSignal) => Promise<T>, outer?: AbortSignal): Promise<T> {
    const controller = new AbortController();
    let hung = false;
    const stop = () => controller.abort(outer?.reason);
    outer?.addEventListener('abort', stop, { once: true });
    if (outer?.aborted) stop();
    const timer = setInterval(() => {
      if (this.down) {
        hung = true;
        controller.abort();
        return;
      }
      void this.answersPing().then((ok) => {
        if (ok || controller.signal.aborted) return;
        hung = true;
        this.markDown();
        controller.abort();
      });
    }, PING_AFTER_MS);
    timer.unref();
    try {
      return await work(controller.signal);
    } catch (err) {
      if (hung && !outer?.aborted) throw new ServerUnavailable(this.url, `no answer to a ping within ${PING_TIMEOUT_MS} ms`, false, err);
      const failure = outer?.aborted ? undefined : transportFailure(err);
      if (!failure) throw err;
      if (failure.notSent) this.markDown();
      throw new ServerUnavailable(this.url, (err as Error).message || String(err), failure.notSent, err);
    } finally {
      clearInterval(timer);
      outer?.removeEventListener('abort', stop);
    }
  }

  close(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }
}

function pingOnce(url: string, ca: Buffer | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const https = url.startsWith('https:');
    // A fresh connection (no agent): a kept-alive socket to a server that was hung may be dead.
    const request = (https ? httpsGet : httpGet)(url, { agent: false, timeout: PING_TIMEOUT_MS, ...(https && ca ? { ca } : {}) }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy(new Error('ping timed out')));
    request.on('error', () => resolve(false));
  });
}
