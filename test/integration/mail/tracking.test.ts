// Tracking and one-click unsubscribe through real HTTP: a message sent by the sender
// (workers/run.ts mail-sender) to a relay of this file's, its links followed as a
// mail client would, the events read back from Postgres and from mail.events.
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import type { Child } from '../../support/processes.ts';
import { readTopic } from '../../support/topic-reader.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child;

// Its own databases: its sender takes only this file's queued mail.
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress();
  relay = await startSmtpCapture();
  sender = await startMailSender({ SMTP_URL: relay.url });
}, 120_000);

afterAll(async () => {
  if (sender) await stopMailSender(sender);
  await relay?.close();
  await ingress?.close();
});

const DESTINATION = 'https://example.com/path/to?a=1&b=two%20words#section-2';

async function sentMessage(trackingHost: string | undefined, withTopic: boolean) {
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key, undefined, trackingHost);
  const topic = (await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } })).body;
  const other = (await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'offers', name: 'Offers', default_subscription: 'opt_in' } })).body;
  const html = `<html><body><p><a class="x" href="${DESTINATION.replace(/&/g, '&amp;')}">Read</a> or <a href='mailto:help@example.com'>write</a></p></body></html>`;
  const res = await call(ingress.url, 'POST', '/emails', {
    key: org.key,
    body: { from: `News <news@${domain.name}>`, to: ['Reader@Example.net'], subject: 'Tracked', html, text: 'Plain words', ...(withTopic ? { topic_id: topic.id } : {}) },
  });
  expect(res.status).toBe(200);
  const id: string = res.body.id;
  await eventually(async () => relay.byMessageId(id).length === 1, 30_000);
  const parsed = await simpleParser(relay.byMessageId(id)[0]!.raw);
  return { org, id, topic, other, parsed, html: String(parsed.html || '') };
}

const eventsOf = async (messageId: string) =>
  (await ingress.platform.pg.query<{ type: string; url: string | null; recipient: string | null }>('SELECT type, url, recipient FROM mail_events WHERE message_id = $1 ORDER BY occurred_at', [messageId])).rows;

const path = (url: string) => new URL(url).pathname;

describe('tracking, with a tracking host', () => {
  it('rewrites http links through a click link that redirects exactly, adds an open pixel, and records each with the message id', async () => {
    const { id, html } = await sentMessage('track.example.org', false);
    const clicks = [...html.matchAll(/href="(https:\/\/track\.example\.org\/m\/c\/[^"]+)"/g)].map((m) => m[1]!);
    expect(clicks).toHaveLength(1);
    expect(html).toContain("href='mailto:help@example.com'");
    const pixel = /<img src="(https:\/\/track\.example\.org\/m\/o\/[^"]+)"/.exec(html)![1]!;

    const click = await fetch(`${ingress.url}${path(clicks[0]!)}`, { redirect: 'manual' });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe(DESTINATION);
    const open = await fetch(`${ingress.url}${path(pixel)}`);
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('image/gif');
    expect((await open.arrayBuffer()).byteLength).toBeGreaterThan(20);

    // An altered token is not a link of ours, and records nothing.
    const altered = path(clicks[0]!).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(`${ingress.url}${altered}`, { redirect: 'manual' })).status).toBe(404);

    await eventually(async () => (await eventsOf(id)).length === 3);
    expect(await eventsOf(id)).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'delivered' }),
      expect.objectContaining({ type: 'clicked', url: DESTINATION }),
      expect.objectContaining({ type: 'opened' }),
    ]));
    // The same events for data teams, on mail.events, keyed by organization.
    const records = await readTopic<{ message_id: string; type: string; url: string | null }>(ingress.platform.config, 'mail.events', (all) => all.filter((r) => r.value.message_id === id).length >= 3, 30_000);
    expect(records.filter((r) => r.value.message_id === id).map((r) => r.value.type).sort()).toEqual(['clicked', 'delivered', 'opened']);
  }, 90_000);

  it('leaves a message alone when its domain has no tracking host', async () => {
    const { html } = await sentMessage(undefined, false);
    expect(html).not.toContain('/m/c/');
    expect(html).not.toContain('/m/o/');
    expect(html).toContain(DESTINATION.replace(/&/g, '&amp;'));
  }, 60_000);
});

describe('one-click unsubscribe (RFC 8058)', () => {
  it('carries List-Unsubscribe and List-Unsubscribe-Post on a message about a topic, and a visible link', async () => {
    const { parsed, html } = await sentMessage(undefined, true);
    const message = await sentRaw(parsed.messageId!);
    expect(/^List-Unsubscribe-Post:\s*(.+)$/im.exec(message)![1]!.trim()).toBe('List-Unsubscribe=One-Click');
    const raw = /^List-Unsubscribe:\s*<([^>]+)>/im.exec(message)![1]!;
    expect(raw).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/m\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(html).toContain('>Unsubscribe</a>');
    expect(String(parsed.text)).toContain(`Unsubscribe: ${raw}`);
  }, 60_000);

  it('a GET shows a button and changes nothing; a POST with any body unsubscribes from that topic only, once', async () => {
    const { org, id, topic, other, parsed } = await sentMessage('track.example.org', true);
    const url = /^List-Unsubscribe:\s*<([^>]+)>/im.exec(await sentRaw(parsed.messageId!))![1]!;
    expect(url.startsWith('https://track.example.org/m/u/')).toBe(true);
    const target = `${ingress.url}${path(url)}`;
    const subscriptions = async () =>
      (await ingress.platform.pg.query<{ topic_id: string; subscribed: boolean }>(
        'SELECT s.topic_id, s.subscribed FROM mail_topic_subscriptions s JOIN mail_contacts c ON c.id = s.contact_id WHERE c.organization_id = $1 AND c.email = $2',
        [org.organizationId, 'reader@example.net'],
      )).rows;

    const page = await fetch(target);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post">');
    expect(await subscriptions()).toEqual([]);

    const oneClick = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(oneClick.status).toBe(200);
    expect(await subscriptions()).toEqual([{ topic_id: topic.id, subscribed: false }]);
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(target, { method: 'POST', body: form })).status).toBe(200);
    expect((await fetch(target, { method: 'POST' })).status).toBe(200);
    expect(await subscriptions()).toEqual([{ topic_id: topic.id, subscribed: false }]);
    // The other topic and the contact's own status are untouched.
    const contact = (await call(ingress.url, 'GET', '/api/v1/contacts/reader@example.net', { key: org.key })).body;
    expect(contact.status).toBe('subscribed');
    const topics = (await call(ingress.url, 'GET', `/api/v1/contacts/${contact.id}/topics`, { key: org.key })).body;
    const state = Object.fromEntries((topics.data as { topic: { id: string }; subscribed: boolean }[]).map((t) => [t.topic.id, t.subscribed]));
    expect(state).toEqual({ [topic.id]: false, [other.id]: true });
    const unsubscribed = (await eventsOf(id)).filter((e) => e.type === 'unsubscribed');
    expect(unsubscribed).toEqual([expect.objectContaining({ recipient: 'reader@example.net' })]);
  }, 60_000);
});

/** The raw message the relay received, by its Message-ID header. */
async function sentRaw(messageId: string): Promise<string> {
  return relay.messages.find((m) => m.messageId === messageId)!.raw;
}
