// linkmail_mail_send_queue, scraped from a sender process's operations port over HTTP: mail a
// spent daily allowance holds counts as `waiting`, not `due`, so the "mail is stuck" alert of
// docs/operations.md (due > 5,000 for 15 minutes) does not fire on a cap doing its job; mail the
// sender can take stays `due`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { waitForOutput, type Child } from '../../support/processes.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child | undefined;
let metricsUrl: string;

// Its own databases: the gauge counts every queued message of the database.
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress();
  relay = await startSmtpCapture();
  // One hand-over a second: mail the sender can take stays due long enough to be seen.
  sender = await startMailSender({ SMTP_URL: relay.url, MAIL_SEND_RATE_PER_SEC: '1', METRICS_PORT: '0' });
  await waitForOutput(sender, 'metrics listening', 30_000);
  metricsUrl = JSON.parse(sender.output().split('\n').find((l) => l.includes('metrics listening'))!).url;
}, 180_000);

afterAll(async () => {
  if (sender) await stopMailSender(sender);
  await relay?.close();
  await ingress?.close();
});

async function queue(): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^linkmail_mail_send_queue\{state="(\w+)"\} (\d+)$/gm)].map(([, state, n]) => [state!, Number(n)]));
}

async function organization(options: { daily_send_cap?: number } = {}) {
  const org = await organizationWithKey(ingress.url, { ...options, rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  return { ...org, from: `News <news@${domain.name}>` };
}

async function sendMany(org: Awaited<ReturnType<typeof organization>>, count: number, prefix: string): Promise<string[]> {
  const res = await call(ingress.url, 'POST', '/emails/batch', { key: org.key, body: Array.from({ length: count }, (_, i) => ({ from: org.from, to: [`${prefix}-${i}@example.net`], subject: `${prefix} ${i}`, text: 'Hi' })) });
  expect(res.status).toBe(200);
  return res.body.data.map((d: { id: string }) => d.id);
}

describe('linkmail_mail_send_queue', () => {
  it('counts mail held by an organization\'s daily cap as waiting, not due, also beyond the sender\'s window of 64; mail it can send is due', async () => {
    // 70 messages against a cap of 2: 2 go out; the sender puts back the 64 of its window until
    // the next UTC day and never reaches the last 4, which wait behind them all the same.
    const capped = await organization({ daily_send_cap: 2 });
    const held = await sendMany(capped, 70, 'capped');
    await eventually(async () => held.filter((id) => relay.byMessageId(id).length > 0).length === 2, 60_000);
    const atCap = await eventually(async () => {
      const q = await queue();
      return q.waiting === 68 && q.leased === 0 && q;
    }, 60_000);
    expect(atCap).toEqual({ due: 0, waiting: 68, leased: 0, retrying: 0 });

    // Another organization's mail, which the sender hands over one a second: due until it is taken.
    const open = await organization();
    const sendable = await sendMany(open, 12, 'open');
    const busy = await eventually(async () => {
      const q = await queue();
      return q.due! > 0 ? q : null;
    }, 30_000);
    expect(busy!.waiting).toBe(68);
    expect(busy!.due! + busy!.leased!).toBeLessThanOrEqual(12);
    await eventually(async () => sendable.every((id) => relay.byMessageId(id).length > 0), 60_000);
    expect(await queue()).toEqual({ due: 0, waiting: 68, leased: 0, retrying: 0 });
  }, 180_000);
});
