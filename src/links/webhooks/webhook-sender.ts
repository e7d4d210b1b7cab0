// Sends one webhook request: HTTPS only, to public addresses only (unless the
// host is on the allow-list; checked at connect time), no redirects followed,
// and the whole exchange bounded by the timeout. The answer's status decides:
// 2xx acknowledged, 4xx rejected for good, anything else (3xx, 5xx, timeout,
// connection error) a failure to retry.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { OutboundError, outboundTarget } from '../../platform/http/outbound.ts';
import type { AttemptResult } from './delivery-queue.ts';

export interface SenderOptions {
  timeoutMs: number;
  allowHosts: readonly string[];
  /** Extra CA certificates (PEM file) trusted besides the system's. */
  caFile?: string;
}

export type WebhookSender = (url: string, body: string, headers: Record<string, string>) => Promise<AttemptResult>;

export function createWebhookSender(options: SenderOptions): WebhookSender {
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
        else if (status >= 400 && status < 500) settle({ outcome: 'rejected', statusCode: status, error: null });
        else settle({ outcome: 'failed', statusCode: status, error: status >= 300 && status < 400 ? 'redirects are not followed' : `HTTP ${status}` });
      });
      const deadline = setTimeout(() => {
        request.destroy();
        settle({ outcome: 'failed', statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
      }, options.timeoutMs);
      request.on('error', (err) => settle({ outcome: 'failed', statusCode: null, error: err.message }));
      request.end(body);
    });
}
