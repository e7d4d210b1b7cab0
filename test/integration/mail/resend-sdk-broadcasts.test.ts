// Resend's SDK (unmodified, RESEND_BASE_URL at the test ingress) on broadcasts at the
// root paths, with the broadcast worker (`workers/run.ts mail-broadcasts`) as a child
// process: a broadcast to a segment with a topic reaches exactly the eligible
// contacts, rendered with Resend's variables and an unsubscribe link; without a
// topic, the segment's subscribed contacts that are not suppressed. Drafts are
// updated, duplicated and removed; one organization never sees another's.
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';
import { eventually } from '../../support/env.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { prepareHandover } from '../../../src/mail/sending/smtp-handover.ts';

// Its own databases: its broadcast worker would otherwise start any file's due broadcasts (vitest.config.ts).
useOwnDatabases();

const root = useResendIngress();
let worker: Child | undefined;

beforeAll(async () => {
  worker = await startWorkerKinds(['mail-broadcasts']);
}, 180_000);
afterAll(async () => stopChild(worker, 'SIGTERM'));

async function sender() {
  const org = await organizationWithKey(root.url, { rate_limit: 1000 });
  const domain = (await verifiedDomain(root.url, org.key)).name;
  return { ...org, domain, from: `News <news@${domain}>`, resend: new Resend(org.key) };
}

/** The messages a broadcast made, by recipient. */
async function messagesOf(broadcastId: string) {
  const { rows } = await root.ingress.platform.pg.query<{ id: string; to: string; subject: string; html: string; text_body: string; kind: string; topic_id: string | null }>(
    `SELECT m.id, m.to_addresses[1] AS to, m.subject, m.html, m.text_body, m.kind, m.topic_id FROM mail_broadcast_recipients r JOIN mail_messages m ON m.id = r.message_id
      WHERE r.broadcast_id = $1 ORDER BY 2`,
    [broadcastId],
  );
  return rows;
}

describe('resend.broadcasts', () => {
  it('sends to a segment with a topic: exactly the eligible contacts, with Resend\'s variables and an unsubscribe link', async () => {
    const { resend, from } = await sender();
    const segment = (await resend.segments.create({ name: 'Members' })).data!;
    const topic = (await resend.topics.create({ name: 'Launches', defaultSubscription: 'opt_in' })).data!;
    const add = async (email: string, extra: Record<string, unknown> = {}) => {
      const made = await resend.contacts.create({ email, firstName: email.split('@')[0], segments: [{ id: segment.id }], ...extra });
      expect(made.error).toBeNull();
    };
    // A declared property's fallback fills {{{company}}} for every contact without one.
    await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your team' });
    await add('eligible@example.net', { properties: { plan: 'pro', company: 'Acme' } });
    await add('fallback@example.net', { firstName: undefined });
    await add('unsubscribed@example.net', { unsubscribed: true });
    await add('opted-out@example.net', { topics: [{ id: topic.id, subscription: 'opt_out' }] });
    await add('suppressed@example.net');
    await resend.suppressions.add({ email: 'suppressed@example.net' });
    await resend.contacts.create({ email: 'outside@example.net' });

    const created = await resend.broadcasts.create({
      segmentId: segment.id, topicId: topic.id, from, name: 'Launch', subject: 'Hi {{{FIRST_NAME|friend}}}',
      html: '<p>Dear {{{FIRST_NAME|friend}}} ({{{EMAIL}}}) of {{{company}}}, plan {{{plan|free}}}. <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      text: 'Dear {{{FIRST_NAME|friend}}}', previewText: 'News for {{{FIRST_NAME|you}}}', replyTo: 'help@example.com', send: true,
    });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    const sent = await eventually(async () => {
      const b = (await resend.broadcasts.get(id)).data!;
      return b.status === 'sent' ? b : undefined;
    }, 60_000);
    expect(sent).toMatchObject({ object: 'broadcast', id, name: 'Launch', segment_id: segment.id, audience_id: segment.id, topic_id: topic.id, from, reply_to: ['help@example.com'], sent_at: expect.any(String) });

    const messages = await messagesOf(id);
    expect(messages.map((m) => m.to)).toEqual(['eligible@example.net', 'fallback@example.net']);
    const [eligible, fallback] = messages;
    expect(eligible).toMatchObject({ subject: 'Hi eligible', text_body: 'Dear eligible', kind: 'broadcast.launches' });
    expect(eligible!.html).toContain('Dear eligible (eligible@example.net) of Acme, plan pro.');
    expect(eligible!.html).toContain('News for eligible');
    expect(fallback).toMatchObject({ subject: 'Hi friend', text_body: 'Dear friend' });
    expect(fallback!.html).toContain('Dear friend (fallback@example.net) of your team, plan free.');
    // The sender fills the unsubscribe link per recipient at hand-over: a one-click link for this topic.
    const outgoing = await prepareHandover(root.ingress.platform.pg, root.ingress.platform.secrets, eligible!.id, { secret: 'development-mail-link-secret', publicBaseUrl: 'https://mail.example.org', bounceDomain: '' });
    const mail = outgoing.copies[0]!.mail;
    expect(String(mail.html)).toMatch(/<a href="https:\/\/mail\.example\.org\/m\/u\/[^"]+">Unsubscribe<\/a>/);
    expect(String(mail.html)).not.toContain('RESEND_UNSUBSCRIBE_URL');
    expect((mail.headers as Record<string, string>)['List-Unsubscribe']).toMatch(/^<https:\/\/mail\.example\.org\/m\/u\//);
  });

  it('an /api/v1 broadcast renders as the spec says: {{{X}}} stays, a tag\'s own fallback wins over a declared property fallback', async () => {
    const { resend, key, from } = await sender();
    const segment = (await resend.segments.create({ name: 'Spec' })).data!;
    await call(root.url, 'POST', '/api/v1/topics', { key, body: { slug: 'spec-news', name: 'Spec news', default_subscription: 'opt_in' } });
    await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'declared' });
    await resend.contacts.create({ email: 'ada@example.net', firstName: 'Ada', segments: [{ id: segment.id }] });
    const made = await call(root.url, 'POST', '/api/v1/broadcasts', { key, body: {
      name: 'Spec', from, topic: 'spec-news', segment_id: segment.id, subject: 'Hi {{contact.first_name}}',
      html: '<p>{{{FIRST_NAME}}} {{contact.plan | "free"}} {{{constructor}}} [{{contact.constructor}}] {{contact.toString | "own only"}}</p>', text: '{{{plan|x}}} {{contact.plan | "free"}}',
    } });
    expect(made.status).toBe(201);
    expect((await call(root.url, 'POST', `/api/v1/broadcasts/${made.body.id}/send`, { key })).status).toBeLessThan(300);
    await eventually(async () => (await call(root.url, 'GET', `/api/v1/broadcasts/${made.body.id}`, { key })).body.status === 'sent', 60_000);
    const [message] = await messagesOf(made.body.id);
    expect(message).toMatchObject({ to: 'ada@example.net', subject: 'Hi Ada', text_body: '{{{plan|x}}} free' });
    // Only the contact's own properties render: Object.prototype's names are no property.
    expect(message!.html).toContain('<p>{{{FIRST_NAME}}} free {{{constructor}}} [] own only</p>');
  });

  it('refuses a PATCH that would leave an /api/v1 broadcast without its topic (422 topic_required); a root one with a segment may drop it', async () => {
    const { resend, key, from } = await sender();
    await call(root.url, 'POST', '/api/v1/topics', { key, body: { slug: 'keep', name: 'Keep', default_subscription: 'opt_in' } });
    const spec = await call(root.url, 'POST', '/api/v1/broadcasts', { key, body: { name: 'Whole topic', from, topic: 'keep', subject: 'S', text: 'x' } });
    expect(spec.status).toBe(201);
    const refused = await call(root.url, 'PATCH', `/broadcasts/${spec.body.id}`, { key, body: { topic_id: null } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ statusCode: 422, error: { code: 'topic_required' } });
    expect((await call(root.url, 'GET', `/api/v1/broadcasts/${spec.body.id}`, { key })).body).toMatchObject({ topic: 'keep', segment_id: null });
    // Even with a segment, an /api/v1 broadcast keeps a topic.
    const segment = (await resend.segments.create({ name: 'Some' })).data!;
    const withSegment = await call(root.url, 'POST', '/api/v1/broadcasts', { key, body: { name: 'Seg', from, topic: 'keep', segment_id: segment.id, subject: 'S', text: 'x' } });
    expect((await call(root.url, 'PATCH', `/broadcasts/${withSegment.body.id}`, { key, body: { topic_id: null } })).status).toBe(422);

    const topic = (await call(root.url, 'GET', '/api/v1/topics/keep', { key })).body;
    const atRoot = (await resend.broadcasts.create({ segmentId: segment.id, topicId: topic.id, from, subject: 'S', text: 'x' })).data!;
    expect((await call(root.url, 'PATCH', `/broadcasts/${atRoot.id}`, { key, body: { topic_id: null } })).status).toBe(200);
    expect((await resend.broadcasts.get(atRoot.id)).data).toMatchObject({ topic_id: null, segment_id: segment.id });
  });

  it('without a topic, reaches the segment\'s subscribed contacts that are not suppressed', async () => {
    const { resend, from } = await sender();
    const segment = (await resend.segments.create({ name: 'All' })).data!;
    await resend.topics.create({ name: 'Unrelated', defaultSubscription: 'opt_out' });
    for (const email of ['one@example.net', 'two@example.net', 'gone@example.net', 'left@example.net']) {
      await resend.contacts.create({ email, segments: [{ id: segment.id }], unsubscribed: email.startsWith('left') });
    }
    await resend.suppressions.add({ email: 'gone@example.net' });
    const draft = (await resend.broadcasts.create({ segmentId: segment.id, from, subject: 'Plain', text: 'Hello {{{EMAIL}}}' })).data!;
    expect((await resend.broadcasts.get(draft.id)).data).toMatchObject({ status: 'draft', topic_id: null, name: 'Plain', sent_at: null });
    expect((await resend.broadcasts.send(draft.id)).data).toEqual({ object: 'broadcast', id: draft.id });
    await eventually(async () => (await resend.broadcasts.get(draft.id)).data!.status === 'sent', 60_000);
    const messages = await messagesOf(draft.id);
    expect(messages.map((m) => [m.to, m.text_body, m.kind, m.topic_id])).toEqual([
      ['one@example.net', 'Hello one@example.net', 'broadcast', null],
      ['two@example.net', 'Hello two@example.net', 'broadcast', null],
    ]);
  });

  it('updates, duplicates and removes drafts; schedules in English; cancels; refuses what it cannot do', async () => {
    const { resend, from, key } = await sender();
    const segment = (await resend.segments.create({ name: 'S' })).data!;
    const other = (await resend.segments.create({ name: 'T' })).data!;
    const draft = (await resend.broadcasts.create({ audienceId: segment.id, from, subject: 'First', html: '<p>1</p>' })).data!;
    expect((await resend.broadcasts.update(draft.id, { subject: 'Second', segmentId: other.id, previewText: 'Soon', replyTo: ['r@example.com'] })).data).toMatchObject({ id: draft.id });
    expect((await resend.broadcasts.get(draft.id)).data).toMatchObject({ subject: 'Second', segment_id: other.id, preview_text: 'Soon', reply_to: ['r@example.com'], html: '<p>1</p>' });
    const copy = (await resend.broadcasts.duplicate(draft.id)).data!;
    expect((await resend.broadcasts.get(copy.id)).data).toMatchObject({ status: 'draft', subject: 'Second', segment_id: other.id });
    expect((await resend.broadcasts.remove(copy.id)).data).toEqual({ object: 'broadcast', id: copy.id, deleted: true });
    expect((await resend.broadcasts.get(copy.id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });

    const before = Date.now();
    expect((await resend.broadcasts.send(draft.id, { scheduledAt: 'in 2 hours' })).error).toBeNull();
    const scheduled = (await resend.broadcasts.get(draft.id)).data!;
    expect(scheduled.status).toBe('scheduled');
    expect(Date.parse(scheduled.scheduled_at!)).toBeGreaterThanOrEqual(before + 2 * 3_600_000 - 1000);
    // /api/v1 sees the same broadcast, without a topic.
    expect((await call(root.url, 'GET', `/api/v1/broadcasts/${draft.id}`, { key })).body).toMatchObject({ status: 'scheduled', topic: null, subject: 'Second' });
    const edit = await resend.broadcasts.update(draft.id, { subject: 'Third' });
    expect(edit.error).toMatchObject({ name: 'validation_error', statusCode: 409 });
    expect((edit.error as any).error.code).toBe('not_editable');
    expect((await resend.broadcasts.remove(draft.id)).error).toMatchObject({ statusCode: 409 });
    expect((await resend.broadcasts.cancel(draft.id)).data).toEqual({ object: 'broadcast', id: draft.id });
    expect((await resend.broadcasts.get(draft.id)).data!.status).toBe('canceled');
    expect((await resend.broadcasts.cancel(draft.id)).error).toMatchObject({ statusCode: 409 });

    const listed = await resend.broadcasts.list();
    expect(listed.data!.data.map((b) => [b.id, b.status])).toEqual([[draft.id, 'canceled']]);
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    expect((await resend.broadcasts.create({ from, subject: 'S', html: 'x' } as any)).error).toMatchObject({ name: 'missing_required_field', statusCode: 422 });
    const foreignTopic = await resend.broadcasts.create({ segmentId: segment.id, topicId: '00000000-0000-4000-8000-000000000000', from, subject: 'S', html: 'x' });
    expect((foreignTopic.error as any).error.code).toBe('topic_not_found');
    const unverified = await resend.broadcasts.create({ segmentId: segment.id, from: 'a@unverified.example.com', subject: 'S', html: 'x' });
    expect(unverified.error).toMatchObject({ statusCode: 422 });
    expect((unverified.error as any).error.code).toBe('from_domain_not_verified');
    // send with scheduledAt in English: scheduled for then.
    const later = await resend.broadcasts.create({ segmentId: segment.id, from, subject: 'Later', html: 'x', send: true, scheduledAt: 'tomorrow at 9am' });
    const expected = new Date(); expected.setUTCHours(24 + 9, 0, 0, 0);
    expect((await resend.broadcasts.get(later.data!.id)).data).toMatchObject({ status: 'scheduled', scheduled_at: expected.toISOString() });
    const when = await resend.broadcasts.create({ segmentId: segment.id, from, subject: 'S', html: 'x', send: true, scheduledAt: 'whenever' });
    expect((when.error as any).error.code).toBe('invalid_scheduled_at');
  });

  it('lists the links people clicked, and the recipients by event: clicks, opens', async () => {
    const org = await organizationWithKey(root.url, { rate_limit: 1000 });
    const domain = (await verifiedDomain(root.url, org.key, undefined, 'links.example.com')).name;
    const resend = new Resend(org.key);
    const segment = (await resend.segments.create({ name: 'Readers' })).data!;
    for (const email of ['a@example.net', 'b@example.net']) await resend.contacts.create({ email, segments: [{ id: segment.id }] });
    const id = (await resend.broadcasts.create({
      segmentId: segment.id, from: `News <news@${domain}>`, subject: 'Links', send: true,
      html: '<p><a href="https://example.com/menu">Menu</a> <a href="https://example.com/shop">Shop</a></p>',
    })).data!.id;
    await eventually(async () => (await resend.broadcasts.get(id)).data!.status === 'sent', 60_000);
    expect((await resend.broadcasts.clickedLinks(id)).data).toEqual({ object: 'list', has_more: false, data: [] });

    // Each recipient's tracked links, as the sender hands them over; people click them.
    const click = async (messageId: string, destination: string) => {
      const outgoing = await prepareHandover(root.ingress.platform.pg, root.ingress.platform.secrets, messageId, { secret: 'development-mail-link-secret', publicBaseUrl: root.url, bounceDomain: '' });
      const links = [...String(outgoing.copies[0]!.mail.html).matchAll(/href="https:\/\/links\.example\.com(\/m\/c\/[^"]+)"/g)].map((m) => m[1]!);
      const res = await fetch(`${root.url}${links[destination === 'menu' ? 0 : 1]}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15' } });
      expect(res.headers.get('location')).toBe(`https://example.com/${destination}`);
    };
    const [a, b] = await messagesOf(id);
    // A click repeated within the tracking period counts once (tracking-record.ts).
    await click(a!.id, 'menu');
    await click(a!.id, 'menu');
    await click(a!.id, 'shop');
    await click(b!.id, 'menu');
    const links = (await eventually(async () => {
      const page = (await resend.broadcasts.clickedLinks(id)).data!;
      return page.data.length === 2 && page.data[0]!.clicks === 2 ? page : undefined;
    }, 20_000))!;
    expect(links.data.map((l) => [l.url, l.clicks, l.unique_clicks])).toEqual([['https://example.com/menu', 2, 2], ['https://example.com/shop', 1, 1]]);
    const second = await resend.broadcasts.clickedLinks(id, { limit: 1, after: links.data[0]!.id });
    expect(second.data).toMatchObject({ has_more: false, data: [{ url: 'https://example.com/shop' }] });
    expect((await resend.broadcasts.clickedLinks(id, { limit: 1 })).data!.has_more).toBe(true);
    // Its recipients by event: who clicked what, who opened (the pixel), nobody delivered yet (no sender runs here).
    const clicked = (await resend.broadcasts.recipients(id, { type: 'clicked' })).data!.data.sort((x, y) => x.email.localeCompare(y.email));
    expect(clicked).toEqual([
      { id: a!.id, contact_id: expect.any(String), email: 'a@example.net', count: 2, clicked_links: [{ url: 'https://example.com/menu', clicks: 1 }, { url: 'https://example.com/shop', clicks: 1 }] },
      { id: b!.id, contact_id: expect.any(String), email: 'b@example.net', count: 1, clicked_links: [{ url: 'https://example.com/menu', clicks: 1 }] },
    ]);
    expect((await resend.broadcasts.recipients(id, { type: 'clicked', email: 'B@example.net' })).data!.data.map((r) => r.email)).toEqual(['b@example.net']);
    const outgoing = await prepareHandover(root.ingress.platform.pg, root.ingress.platform.secrets, b!.id, { secret: 'development-mail-link-secret', publicBaseUrl: root.url, bounceDomain: '' });
    const pixel = /src="https:\/\/links\.example\.com(\/m\/o\/[^"]+)"/.exec(String(outgoing.copies[0]!.mail.html))![1]!;
    expect((await fetch(`${root.url}${pixel}`, { headers: { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15' } })).status).toBe(200);
    const opened = (await eventually(async () => {
      const page = (await resend.broadcasts.recipients(id, { type: 'opened' })).data!;
      return page.data.length > 0 ? page : undefined;
    }, 20_000))!;
    expect(opened.data).toEqual([{ id: b!.id, contact_id: expect.any(String), email: 'b@example.net', count: 1 }]);
    expect((await resend.broadcasts.recipients(id, { type: 'delivered' })).data).toEqual({ object: 'list', has_more: false, data: [] });
    // The report's top links count the same clicks.
    expect((await call(root.url, 'GET', `/api/v1/broadcasts/${id}/report`, { key: org.key })).body.top_links).toEqual([{ url: 'https://example.com/menu', clicks: 2 }, { url: 'https://example.com/shop', clicks: 1 }]);
  });

  it('keeps each organization to its own broadcasts and segments', async () => {
    const mine = await sender();
    const theirs = await sender();
    const segment = (await mine.resend.segments.create({ name: 'Mine' })).data!;
    const draft = (await mine.resend.broadcasts.create({ segmentId: segment.id, from: mine.from, subject: 'Mine', html: 'x' })).data!;
    const r = theirs.resend;
    for (const res of [await r.broadcasts.get(draft.id), await r.broadcasts.update(draft.id, { subject: 'X' }), await r.broadcasts.remove(draft.id),
      await r.broadcasts.duplicate(draft.id), await r.broadcasts.send(draft.id), await r.broadcasts.cancel(draft.id), await r.broadcasts.clickedLinks(draft.id),
      await r.broadcasts.recipients(draft.id, { type: 'sent' })]) {
      expect(res.error).toMatchObject({ name: 'not_found', statusCode: 404 });
    }
    const foreignSegment = await r.broadcasts.create({ segmentId: segment.id, from: theirs.from, subject: 'S', html: 'x' });
    expect((foreignSegment.error as any).error.code).toBe('segment_not_found');
    expect((await r.broadcasts.list()).data!.data).toEqual([]);
    expect((await mine.resend.broadcasts.get(draft.id)).data).toMatchObject({ status: 'draft', subject: 'Mine' });
  });
});
