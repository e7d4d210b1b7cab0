// Mail webhook test helpers: the mail-webhooks worker as its own process,
// trusting the test CA and allowed to reach loopback; mail events recorded
// through the product's own path (mail_events with its outbox, published to
// mail.events) for a real message; an organization with Resend's SDK; real
// HTTPS receivers closed together; and a received request's signature headers.
import { Resend } from 'resend';
import type { Platform } from '../../../src/platform/platform.ts';
import { MailEventOutbox, recordEvents, type NewMailEvent } from '../../../src/mail/events/mail-events.ts';
import { startWorkerKinds, type Child } from '../processes.ts';
import type { TestCa } from '../links/test-ca.ts';
import { startReceiver, type Receiver, type ReceivedRequest } from '../links/webhook-receiver.ts';
import { organizationWithKey, verifiedDomain } from './organizations.ts';

export function startMailWebhooks(ca: TestCa, env: Record<string, string> = {}): Promise<Child> {
  return startWorkerKinds(['mail-webhooks'], {
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_CA_FILE: ca.caFile,
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_TIMEOUT_MS: '20000',
    MAIL_WEBHOOK_RETRY_DELAYS_MS: '300,600,1200',
    ...env,
  });
}

/** Records these events and publishes them to mail.events as the product does; their ids. */
export async function emitMailEvents(platform: Platform, events: readonly NewMailEvent[]): Promise<string[]> {
  const queue = new MailEventOutbox(platform.pg, platform.publisher, platform.log);
  const ids: string[] = [];
  for (let i = 0; i < events.length; i += 500) {
    const batch = await recordEvents(platform.pg, events.slice(i, i + 500));
    await queue.publish(batch);
    ids.push(...batch);
  }
  return ids;
}

/** An organization (rate limit 1000) with a verified domain, its key, Resend's SDK on it, and a from address. */
export async function organizationWithSdk(baseUrl: string) {
  const org = await organizationWithKey(baseUrl, { rate_limit: 1000 });
  const domain = await verifiedDomain(baseUrl, org.key);
  return { ...org, domain: domain.name, resend: new Resend(org.key), from: `Acme <hello@${domain.name}>` };
}

/** HTTPS receivers trusted through `ca`, all closed by closeAll(). */
export function receiversOf(ca: () => TestCa) {
  const open: Receiver[] = [];
  return {
    async start(answer?: Parameters<typeof startReceiver>[1]): Promise<Receiver> {
      const r = await startReceiver(ca(), answer);
      open.push(r);
      return r;
    },
    async closeAll(): Promise<void> {
      for (const r of open) await r.close();
    },
  };
}

/** The Standard Webhooks headers of a received request, as resend.webhooks.verify takes them. */
export const signatureHeaders = (r: ReceivedRequest) => ({ id: String(r.headers['webhook-id']), timestamp: String(r.headers['webhook-timestamp']), signature: String(r.headers['webhook-signature']) });
