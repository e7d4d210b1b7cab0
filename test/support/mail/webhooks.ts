// Mail webhook test helpers: the mail-webhooks worker as its own process,
// trusting the test CA and allowed to reach loopback, and mail events recorded
// through the product's own path (mail_events with its outbox, published to
// mail.events) for a real message.
import type { Platform } from '../../../src/platform/platform.ts';
import { MailEventQueue, recordEvents, type NewMailEvent } from '../../../src/mail/events/mail-events.ts';
import { startWorkerKinds, type Child } from '../processes.ts';
import type { TestCa } from '../links/test-ca.ts';

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
  const queue = new MailEventQueue(platform.pg, platform.publisher, platform.log);
  const ids: string[] = [];
  for (let i = 0; i < events.length; i += 500) {
    const batch = await recordEvents(platform.pg, events.slice(i, i + 500));
    await queue.publish(batch);
    ids.push(...batch);
  }
  return ids;
}
