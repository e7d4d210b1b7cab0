// Sends one webhook request: HTTPS only, to public addresses only (unless the
// host is on the allow-list; checked at connect time), no redirects followed,
// and the whole exchange bounded by the timeout. The answer's status decides:
// 2xx acknowledged, 4xx rejected for good, anything else (3xx, 5xx, timeout,
// connection error) a failure to retry. A product may name 4xx statuses that
// are worth retrying all the same (mail: 408 and 429).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { OutboundError, outboundTarget } from '../http/outbound.ts';
import type { AttemptResult } from './webhook-deliveries.ts';

export interface SenderOptions {
  timeoutMs: number;
  allowHosts: readonly string[];
  /** Extra CA certificates (PEM file) trusted besides the system's. */
  caFile?: string;
  /** 4xx statuses retried like failures instead of rejected for good (none unless named). */
  retryStatuses?: readonly number[];
}

/**
 * The error as the workspace may read it in its delivery log: never what a name resolved to
 * inside our network, nor which internal names exist (the details go to our logs only).
 */
function publicMessage(err: Error & { code?: string }, hostname: string): string {
  if (err instanceof OutboundError && err.reason === 'address_refused') return `${hostname} does not resolve to a public address`;
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.code === 'ENODATA') return `${hostname} could not be resolved`;
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code === 'ETIMEDOUT') return 'connection timed out';
  if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') || err.code === 'DEPTH_ZERO_SELF_SIGNED_CERT') return `TLS: ${err.code}`;
  return err.code ? `network error (${err.code})` : 'network error';
}

export type WebhookSender = (url: string, body: string, headers: Record<string, string>) => Promise<AttemptResult>;

export function createWebhookSender(options: SenderOptions): WebhookSender {
  const retried = new Set(options.retryStatuses ?? []);
  const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined;
  return (rawUrl, body, headers) =>
    new Promise<AttemptResult>((resolve) => {
      let target: ReturnType<typeof outboundTarget>;
      try {
        target = outboundTarget(rawUrl, options.allowHosts);
        if (target.url.protocol !== 'https:') throw new OutboundError('bad_url', 'webhook endpoints must use https');
      } catch (err) {
        return resolve({ outcome: 'failed', statusCode: null, error: (err as Error).message });
      }
      let settled = false;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      const request = https.request(target.url, {
        method: 'POST',
        lookup: target.lookup,
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'linkmail-webhooks/1', ...headers },
      }, (response) => {
        const status = response.statusCode ?? 0;
        // The status is the answer; the body is not read (a receiver may keep streaming it).
        response.destroy();
        if (status >= 200 && status < 300) settle({ outcome: 'acknowledged', statusCode: status, error: null });
        else if (status >= 400 && status < 500 && !retried.has(status)) settle({ outcome: 'rejected', statusCode: status, error: null });
        else settle({ outcome: 'failed', statusCode: status, error: status >= 300 && status < 400 ? 'redirects are not followed' : `HTTP ${status}` });
      });
      const deadline = setTimeout(() => {
        request.destroy();
        settle({ outcome: 'failed', statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
      }, options.timeoutMs);
      request.on('error', (err) => settle({ outcome: 'failed', statusCode: null, error: publicMessage(err, target.url.hostname) }));
      request.end(body);
    });
}
