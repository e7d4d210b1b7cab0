// Bounce (RFC 3464) and complaint (RFC 5965) reports sent over SMTP to the ingress's
// inbound address, as a receiving mail system would send them, about messages the
// API accepted (their Message-ID is <id@from domain>, as the sender writes it).
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { returnPath } from '../../../src/mail/sending/return-path.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ MAIL_INBOUND_SMTP_PORT: '0' });
}, 120_000);

afterAll(async () => {
  await ingress?.close();
});

/** Sends a raw message to the inbound address with the null sender, as bounces are sent; answers the SMTP reply. */
async function deliverReport(raw: string, to = 'bounces@inbound.example.org'): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: ingress.app.inboundSmtpPort!, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from: '', to: [to] }, raw: raw.replace(/\r?\n/g, '\r\n') });
    return info.response;
  } finally {
    transport.close();
  }
}

/** A Postfix-style delivery status notification about one recipient of our message. */
const dsn = (messageId: string, domain: string, recipient: string, action: string, status: string) => `From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
To: news@${domain}
Subject: Undelivered Mail Returned to Sender
Date: Wed, 25 Nov 2026 00:50:00 +0000
Message-ID: <dsn-${Math.random().toString(36).slice(2)}@mx.example.net>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"

--dsn-boundary
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

--dsn-boundary
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
X-Postfix-Queue-ID: 4B2D51E0F2
Arrival-Date: Wed, 25 Nov 2026 00:49:58 +0000

Final-Recipient: rfc822; ${recipient}
Original-Recipient: rfc822;${recipient}
Action: ${action}
Status: ${status}
Remote-MTA: dns; mx2.example.net
Diagnostic-Code: smtp; ${status.startsWith('5') ? '550' : '452'} ${status} <${recipient}>:
    Recipient address rejected

--dsn-boundary
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

From: News <news@${domain}>
To: ${recipient}
Subject: Hello
Message-ID: <${messageId}@${domain}>
Date: Wed, 25 Nov 2026 00:49:57 +0000

--dsn-boundary--
`;

/** An RFC 5965 abuse report (the shape of its Appendix B example) about our message. */
const arf = (messageId: string, domain: string, recipient: string) => `From: <abuse@mail.example.net>
Date: Wed, 25 Nov 2026 00:51:00 +0000
Subject: FW: Hello
To: <fbl@inbound.example.org>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report;
     boundary="part1_13d.2e68ed54_boundary"

--part1_13d.2e68ed54_boundary
Content-Type: text/plain; charset="US-ASCII"
Content-Transfer-Encoding: 7bit

This is an email abuse report for an email message received from IP
192.0.2.1 on Wed, 25 Nov 2026 00:49:57 +0000.  For more information
about this format please see http://www.mipassoc.org/arf/.

--part1_13d.2e68ed54_boundary
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces@${domain}>
Original-Rcpt-To: <${recipient}>
Arrival-Date: Wed, 25 Nov 2026 00:49:57 +0000
Reported-Domain: ${domain}
Source-IP: 192.0.2.1

--part1_13d.2e68ed54_boundary
Content-Type: message/rfc822
Content-Disposition: inline

From: News <news@${domain}>
To: ${recipient}
Subject: Hello
Message-ID: <${messageId}@${domain}>
Date: Wed, 25 Nov 2026 00:49:57 +0000

Hi there
--part1_13d.2e68ed54_boundary--
`;

describe('bounce and complaint reports on the inbound SMTP address', () => {
  it('mark the message, suppress hard bounces and complaints, ignore delays, and count each report once', async () => {
    const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const domain = await verifiedDomain(ingress.url, org.key);
    const send = async (to: string) => (await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `News <news@${domain.name}>`, to: [to], subject: 'Hello', text: 'Hi there' } })).body.id as string;
    const [gone, full, slow, reader] = [await send('gone@example.net'), await send('full@example.net'), await send('slow@example.net'), await send('reader@example.net')];
    const email = async (id: string) => (await call(ingress.url, 'GET', `/emails/${id}`, { key: org.key })).body;
    const suppression = async (address: string) => (await call(ingress.url, 'GET', `/api/v1/suppressions/${address}`, { key: org.key }));

    expect(await deliverReport(dsn(gone, domain.name, 'gone@example.net', 'failed', '5.1.1'))).toMatch(/^250/);
    expect(await deliverReport(dsn(full, domain.name, 'full@example.net', 'failed', '4.2.2'))).toMatch(/^250/);
    expect(await deliverReport(dsn(slow, domain.name, 'slow@example.net', 'delayed', '4.4.1'))).toMatch(/^250/);
    expect(await deliverReport(arf(reader, domain.name, 'reader@example.net'))).toMatch(/^250/);
    // The same bounce again (a provider retrying) and a message that is no report.
    expect(await deliverReport(dsn(gone, domain.name, 'gone@example.net', 'failed', '5.1.1'))).toMatch(/^250/);
    expect(await deliverReport('From: someone@example.net\nTo: bounces@inbound.example.org\nSubject: hi\n\nNot a report.\n')).toMatch(/^250/);

    expect((await email(gone)).last_event).toBe('bounced');
    expect((await email(full)).last_event).toBe('bounced');
    expect((await email(slow)).last_event).toBe('queued');
    expect((await email(reader)).last_event).toBe('complained');
    // A hard bounce and a complaint suppress the address; a full mailbox and a delay do not.
    expect((await suppression('gone@example.net')).body).toMatchObject({ email: 'gone@example.net', reason: 'bounce' });
    expect((await suppression('reader@example.net')).body).toMatchObject({ email: 'reader@example.net', reason: 'complaint' });
    expect((await suppression('full@example.net')).status).toBe(404);
    expect((await suppression('slow@example.net')).status).toBe(404);
    // And the next message to a suppressed address leaves it out.
    const again = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `News <news@${domain.name}>`, to: ['gone@example.net'], subject: 'Again', text: 'Hi' } });
    expect((await email(again.body.id)).last_event).toBe('suppressed');

    const { rows } = await ingress.platform.pg.query<{ message_id: string; type: string; recipient: string; detail: string }>(
      'SELECT message_id, type, recipient, detail FROM mail_events WHERE message_id = ANY($1) ORDER BY occurred_at', [[gone, full, slow, reader]],
    );
    expect(rows).toEqual([
      { message_id: gone, type: 'bounced', recipient: 'gone@example.net', detail: '5.1.1' },
      { message_id: full, type: 'bounced', recipient: 'full@example.net', detail: '4.2.2' },
      { message_id: reader, type: 'complained', recipient: 'reader@example.net', detail: 'abuse' },
    ]);
    const records = await readTopic<{ message_id: string; type: string }>(ingress.platform.config, 'mail.events', (all) => all.filter((r) => [gone, full, reader].includes(r.value.message_id)).length >= 3, 30_000);
    expect(records.filter((r) => [gone, full, reader].includes(r.value.message_id)).map((r) => r.value.type).sort()).toEqual(['bounced', 'bounced', 'complained']);
  }, 90_000);

  it('changes only the message\'s own recipients: a report naming another address, or sent to a forged return path, is dropped', async () => {
    const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const domain = await verifiedDomain(ingress.url, org.key);
    const send = async (to: string[]) => (await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `News <news@${domain.name}>`, to, subject: 'Hello', text: 'Hi there' } })).body.id as string;
    const real = await send(['someone@example.net', 'other@example.net']);
    const other = await send(['third@example.net']);
    const suppression = async (address: string) => (await call(ingress.url, 'GET', `/api/v1/suppressions/${address}`, { key: org.key })).status;
    const events = async (id: string) => (await ingress.platform.pg.query('SELECT type, recipient FROM mail_events WHERE message_id = $1', [id])).rows;
    const secret = ingress.platform.config.MAIL_LINK_SECRET;

    // A hostile client quotes a real Message-ID with an address it wants suppressed.
    expect(await deliverReport(dsn(real, domain.name, 'ceo-victim@important.example', 'failed', '5.1.1'))).toMatch(/^250/);
    expect(await deliverReport(arf(real, domain.name, 'ceo-victim@important.example'))).toMatch(/^250/);
    // A return path whose signature is not ours, for a real recipient.
    const forged = returnPath(secret, real, 'inbound.example.org').replace(/-([0-9a-z]+)@/, (_, mac: string) => `-${mac.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}@`);
    expect(await deliverReport(dsn(real, domain.name, 'someone@example.net', 'failed', '5.1.1'), forged)).toMatch(/^250/);
    // A signed return path of one message quoting another's Message-ID.
    expect(await deliverReport(dsn(real, domain.name, 'someone@example.net', 'failed', '5.1.1'), returnPath(secret, other, 'inbound.example.org'))).toMatch(/^250/);
    // A signed return path with a recipient that is no recipient of its message.
    expect(await deliverReport(dsn(other, domain.name, 'ceo-victim@important.example', 'failed', '5.1.1'), returnPath(secret, other, 'inbound.example.org'))).toMatch(/^250/);
    expect(await suppression('ceo-victim@important.example')).toBe(404);
    expect(await suppression('someone@example.net')).toBe(404);
    expect(await events(real)).toEqual([]);
    expect(await events(other)).toEqual([]);

    // The message's own recipients: by Message-ID alone, and by a signed return path (no quoted copy needed).
    expect(await deliverReport(dsn(real, domain.name, 'Other@Example.net', 'failed', '5.1.1'))).toMatch(/^250/);
    expect(await deliverReport(dsn(other, domain.name, 'third@example.net', 'failed', '5.1.1').replace(/Message-ID: <[0-9a-f-]+@/, 'Message-ID: <not-ours@'), returnPath(secret, other, 'inbound.example.org'))).toMatch(/^250/);
    expect(await suppression('other@example.net')).toBe(200);
    expect(await suppression('third@example.net')).toBe(200);
    expect(await events(real)).toEqual([{ type: 'bounced', recipient: 'other@example.net' }]);
    expect(await events(other)).toEqual([{ type: 'bounced', recipient: 'third@example.net' }]);
  }, 90_000);

  it('refuses a message larger than a report can be, while it is sent', async () => {
    const big = `From: a@example.net\nTo: bounces@inbound.example.org\nSubject: big\n\n${'x'.repeat(76).concat('\n').repeat(150_000)}`;
    await expect(deliverReport(big)).rejects.toMatchObject({ responseCode: 552 });
  }, 60_000);
});
