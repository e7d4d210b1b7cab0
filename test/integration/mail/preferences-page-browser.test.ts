// The unsubscribe placeholder and the preferences page, in a real browser (Debian's
// chromium, headless, driven by playwright-core): a message sent by a sender of this
// file's to a relay of this file's carries {{{RESEND_UNSUBSCRIBE_URL}}} and
// {{unsubscribe_url}} filled with the recipient's own link; the browser opens it,
// unticks a topic, saves, reloads, and the choice holds, in the page and in the API.
// A broadcast about no topic (the broadcast worker runs as a child) carries a
// one-click unsubscribe from all the organization's broadcasts.
import { simpleParser } from 'mailparser';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { DESKTOP_UA } from '../../support/links/scans.ts';
import type { Child } from '../../support/processes.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { startWorkerKinds, stopChild } from '../../support/processes.ts';

const CHROMIUM = '/usr/bin/chromium';

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child;
let browser: Browser;
let broadcaster: Child | undefined;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  relay = await startSmtpCapture();
  // Links in the mail point at this file's ingress, so the browser opens them as they are.
  [sender, broadcaster, browser] = await Promise.all([
    startMailSender({ SMTP_URL: relay.url, PUBLIC_BASE_URL: ingress.url }),
    startWorkerKinds(['mail-broadcasts']),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
  ]);
}, 120_000);

afterAll(async () => {
  await stopChild(broadcaster, 'SIGTERM');
  await browser?.close();
  if (sender) await stopMailSender(sender);
  await relay?.close();
  await ingress?.close();
});

async function organization() {
  const org = await organizationWithKey(ingress.url);
  const domain = await verifiedDomain(ingress.url, org.key);
  const topic = async (slug: string, name: string, default_subscription: 'opt_in' | 'opt_out') =>
    (await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug, name, default_subscription } })).body as { id: string };
  const topics = { news: await topic('news', 'News', 'opt_in'), offers: await topic('offers', 'Offers', 'opt_in'), digest: await topic('digest', 'Weekly digest', 'opt_out') };
  return { org, from: `Acme <hello@${domain.name}>`, topics };
}

/** Sends through the API and answers each copy the relay received, parsed. */
async function send(key: string, body: Record<string, unknown>, copies = 1) {
  const res = await call(ingress.url, 'POST', '/emails', { key, body });
  expect(res.status).toBe(200);
  await eventually(async () => relay.byMessageId(res.body.id).length === copies, 30_000);
  return { id: res.body.id as string, copies: await Promise.all(relay.byMessageId(res.body.id).map(async (c) => ({ to: c.to, raw: c.raw, parsed: await simpleParser(c.raw) }))) };
}

const HTML = '<html><body><p>Hello</p><p><a id="manage" href="{{{RESEND_UNSUBSCRIBE_URL}}}">Manage your emails</a></p></body></html>';
const TEXT = 'Hello\n\nManage your emails: {{unsubscribe_url}}\n';

/** The page's topics as the browser shows them: name and ticked. */
const shownState = async (page: Page) =>
  page.$$eval('input[name=topic]', (boxes) => boxes.map((b) => [(b.parentElement?.textContent ?? '').trim(), (b as HTMLInputElement).checked]));

const apiState = async (key: string, email: string) => {
  const contact = await call(ingress.url, 'GET', `/api/v1/contacts/${email}`, { key });
  if (contact.status !== 200) return null;
  const topics = (await call(ingress.url, 'GET', `/api/v1/contacts/${contact.body.id}/topics`, { key })).body.data as { topic: { slug: string }; subscribed: boolean }[];
  return Object.fromEntries(topics.map((t) => [t.topic.slug, t.subscribed]));
};

describe('the unsubscribe placeholder and the preferences page', () => {
  it('fills the placeholders with the recipient\'s link; in the browser a topic unticked and saved stays so after a reload, and the API shows it', async () => {
    const { org, from, topics } = await organization();
    const { id, copies: [copy] } = await send(org.key, { from, to: 'Reader@Example.net', subject: 'News', html: HTML, text: TEXT, topic_id: topics.news.id });
    const link = /href="([^"]+)"[^>]*>Manage your emails/.exec(String(copy!.parsed.html))![1]!;
    expect(link).toMatch(new RegExp(`^${ingress.url}/m/u/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    // The same link in the text part and in List-Unsubscribe; the part placed it, so no footer is added.
    expect(String(copy!.parsed.text)).toContain(`Manage your emails: ${link}\n`);
    expect(/^List-Unsubscribe:\s*<([^>]+)>/im.exec(copy!.raw)![1]).toBe(link);
    expect(String(copy!.parsed.html)).not.toContain('>Unsubscribe</a>');
    expect(copy!.raw).not.toContain('RESEND_UNSUBSCRIBE_URL');
    expect(await apiState(org.key, 'reader@example.net')).toBeNull();

    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    expect((await page.goto(link))!.status()).toBe(200);
    expect(await page.title()).toBe('Email preferences');
    expect(await page.textContent('body')).toContain('reader@example.net');
    // Sorted by name; each with the address's effective state (its defaults: it is no contact yet).
    expect(await shownState(page)).toEqual([['News (this email)', true], ['Offers', true], ['Weekly digest', false]]);
    expect(await apiState(org.key, 'reader@example.net')).toBeNull(); // looking changes nothing

    await page.getByLabel('Offers').uncheck();
    await page.getByLabel('Weekly digest').check();
    await Promise.all([page.waitForURL(/\?saved=1$/), page.click('#save')]);
    expect(await page.textContent('#saved')).toContain('saved');
    await page.reload();
    expect(await shownState(page)).toEqual([['News (this email)', true], ['Offers', false], ['Weekly digest', true]]);
    expect(await apiState(org.key, 'reader@example.net')).toEqual({ news: true, offers: false, digest: true });

    // The page's one-click button for the message's topic is RFC 8058's POST.
    await Promise.all([page.waitForLoadState('load'), page.click('#unsubscribe')]);
    expect(await page.textContent('body')).toContain('will get no more of these emails');
    await page.goto(link);
    expect(await shownState(page)).toEqual([['News (this email)', false], ['Offers', false], ['Weekly digest', true]]);
    expect(await page.$('#unsubscribe')).toBeNull();
    expect(await apiState(org.key, 'reader@example.net')).toEqual({ news: false, offers: false, digest: true });
    await context.close();

    const { rows } = await ingress.platform.pg.query<{ detail: string; recipient: string }>("SELECT detail, recipient FROM mail_events WHERE message_id = $1 AND type = 'unsubscribed' ORDER BY occurred_at", [id]);
    expect(rows).toEqual([{ detail: topics.offers.id, recipient: 'reader@example.net' }, { detail: topics.news.id, recipient: 'reader@example.net' }]);
  }, 90_000);

  it('a message about no topic that uses the placeholder goes as one copy per recipient, each with a page of all topics and no one-click header', async () => {
    const { org, from, topics } = await organization();
    const { copies } = await send(org.key, { from, to: 'one@example.net', cc: 'two@example.net', subject: 'Receipt', html: HTML, text: TEXT }, 2);
    const links = new Map(copies.map((c) => [c.to[0], /href="([^"]+)"[^>]*>Manage your emails/.exec(String(c.parsed.html))![1]!]));
    expect([...links.keys()].sort()).toEqual(['one@example.net', 'two@example.net']);
    expect(links.get('one@example.net')).not.toBe(links.get('two@example.net'));
    for (const c of copies) {
      expect(c.raw).not.toMatch(/^List-Unsubscribe/im);
      expect(c.parsed.to).toMatchObject({ text: 'one@example.net' });
      expect(String(c.parsed.text)).toContain(`Manage your emails: ${links.get(c.to[0])}`);
    }

    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    await page.goto(links.get('two@example.net')!);
    expect(await page.textContent('body')).toContain('two@example.net');
    expect(await shownState(page)).toEqual([['News', true], ['Offers', true], ['Weekly digest', false]]);
    expect(await page.$('#unsubscribe')).toBeNull();
    await page.getByLabel('News').uncheck();
    await Promise.all([page.waitForURL(/\?saved=1$/), page.click('#save')]);
    await page.reload();
    expect(await shownState(page)).toEqual([['News', false], ['Offers', true], ['Weekly digest', false]]);
    await context.close();
    expect(await apiState(org.key, 'two@example.net')).toEqual({ news: false, offers: true, digest: false });
    expect(await apiState(org.key, 'one@example.net')).toBeNull();
    // No topic, so no one-click unsubscribe: the link's POST is refused and changes nothing.
    expect((await fetch(links.get('one@example.net')!, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(404);
    expect(topics.news.id).toBeTruthy();
  }, 90_000);

  it('the token is the only authority: no cookies, never framed; an altered token or a body that is no form changes nothing', async () => {
    const { org, from, topics } = await organization();
    const { copies: [copy] } = await send(org.key, { from, to: 'three@example.net', subject: 'News', html: HTML, topic_id: topics.offers.id });
    const link = /href="([^"]+)"[^>]*>Manage your emails/.exec(String(copy!.parsed.html))![1]!;
    const page = await fetch(link);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const form = (body: string, url = `${link}/preferences`, type = 'application/x-www-form-urlencoded') =>
      fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': type }, body });
    const altered = link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await form(`shown=${topics.news.id}`, `${altered}/preferences`)).status).toBe(404);
    expect((await form(JSON.stringify({ shown: [topics.news.id] }), undefined, 'application/json')).status).toBe(415);
    expect((await form('shown=not-a-topic&topic=not-either')).status).toBe(303);
    expect((await form(`shown=${topics.news.id}&topic=%00`)).status).toBe(400);
    expect(await apiState(org.key, 'three@example.net')).toBeNull();
    const saved = await form(`shown=${topics.news.id}`);
    expect(saved.status).toBe(303);
    expect(new URL(saved.headers.get('location')!, `${link}/preferences`).toString()).toBe(`${link}?saved=1`);
    expect(await apiState(org.key, 'three@example.net')).toEqual({ news: false, offers: true, digest: false });
  }, 60_000);
  it('a broadcast about no topic has a one-click unsubscribe from all broadcasts: the header, the placeholder and the page\'s button; the next broadcast skips the contact', async () => {
    const { org, from } = await organization();
    const segment = (await call(ingress.url, 'POST', '/segments', { key: org.key, body: { name: 'Everyone' } })).body as { id: string };
    for (const email of ['page@example.net', 'click@example.net', 'stays@example.net']) {
      expect((await call(ingress.url, 'POST', '/contacts', { key: org.key, body: { email, segments: [{ id: segment.id }] } })).status).toBe(201);
    }
    /** Sends a broadcast without a topic at the root and answers each recipient's copy, parsed. */
    const broadcast = async (subject: string, expected: number) => {
      const made = await call(ingress.url, 'POST', '/broadcasts', { key: org.key, body: { segment_id: segment.id, from, subject, html: HTML, text: TEXT, send: true } });
      expect(made.status).toBe(201);
      const ids = await eventually(async () => {
        const { rows } = await ingress.platform.pg.query<{ id: string }>('SELECT message_id AS id FROM mail_broadcast_recipients WHERE broadcast_id = $1', [made.body.id]);
        return rows.length === expected && rows.every((r) => relay.byMessageId(r.id).length === 1) ? rows : undefined;
      }, 60_000);
      const copies = ids!.map((r) => relay.byMessageId(r.id)[0]!);
      return new Map(await Promise.all(copies.map(async (c) => [c.to[0]!, { raw: c.raw, parsed: await simpleParser(c.raw) }] as const)));
    };
    const first = await broadcast('Monthly', 3);
    const links = new Map([...first].map(([to, c]) => {
      const link = /href="([^"]+)"[^>]*>Manage your emails/.exec(String(c.parsed.html))![1]!;
      // RFC 8058: the placeholder's link is the one-click header's, with its POST header.
      expect(/^List-Unsubscribe:\s*<([^>]+)>/im.exec(c.raw)![1]).toBe(link);
      expect(c.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/im);
      return [to, link];
    }));
    const unsubscribed = async (email: string) => (await call(ingress.url, 'GET', `/contacts/${email}`, { key: org.key })).body.unsubscribed as boolean;

    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    await page.goto(links.get('page@example.net')!);
    expect(await page.textContent('#unsubscribe')).toBe('Unsubscribe from all broadcasts');
    expect(await shownState(page)).toEqual([['News', true], ['Offers', true], ['Weekly digest', false]]);
    expect(await unsubscribed('page@example.net')).toBe(false); // looking changes nothing
    await Promise.all([page.waitForLoadState('load'), page.click('#unsubscribe')]);
    expect(await page.textContent('body')).toContain('will get no more broadcasts from this sender');
    await page.goto(links.get('page@example.net')!);
    expect(await page.$('#unsubscribe')).toBeNull();
    expect(await page.textContent('#unsubscribed')).toContain('unsubscribed from all broadcasts');
    await context.close();
    expect(await unsubscribed('page@example.net')).toBe(true);

    // The mail client's one-click POST, twice: the second changes nothing more.
    for (let i = 0; i < 2; i++) expect((await fetch(links.get('click@example.net')!, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(200);
    expect(await unsubscribed('click@example.net')).toBe(true);
    expect(await unsubscribed('stays@example.net')).toBe(false);
    const { rows } = await ingress.platform.pg.query<{ recipient: string; detail: string | null }>(
      "SELECT recipient, detail FROM mail_events WHERE type = 'unsubscribed' AND message_id IN (SELECT message_id FROM mail_broadcast_recipients r JOIN mail_broadcasts b ON b.id = r.broadcast_id WHERE b.organization_id = $1) ORDER BY recipient",
      [org.organizationId],
    );
    expect(rows).toEqual([{ recipient: 'click@example.net', detail: null }, { recipient: 'page@example.net', detail: null }]);
    const updates = await ingress.platform.pg.query("SELECT 1 FROM mail_events WHERE organization_id = $1 AND type = 'contact.updated'", [org.organizationId]);
    expect(updates.rowCount).toBe(2);

    // The next broadcast about no topic goes to the one contact left.
    expect([...(await broadcast('Next month', 1)).keys()]).toEqual(['stays@example.net']);
  }, 90_000);
});
