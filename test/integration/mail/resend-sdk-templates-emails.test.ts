// Resend's SDK (unmodified, RESEND_BASE_URL at the test ingress) on templates at the
// root paths and on what Resend's emails add: `template` with variables, English
// `scheduled_at`, and a `topic_id` that must be the organization's.
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { nextSecond, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { storedCount } from '../../support/mail/messages.ts';

const root = useResendIngress();

const sender = async () => {
  const org = await organizationWithKey(root.url);
  const domain = (await verifiedDomain(root.url, org.key)).name;
  return { ...org, domain, resend: new Resend(org.key) };
};

describe('resend.templates', () => {
  it('creates a draft with alias, from, reply_to and variables; publishes, gets, lists, updates, duplicates and removes it', async () => {
    const { resend, key, domain } = await sender();
    const created = await resend.templates.create({
      name: 'Welcome', alias: 'welcome', from: `Acme <hello@${domain}>`, replyTo: 'help@example.com', subject: 'Hi {{{FIRST_NAME|there}}}',
      html: '<p>Hello {{{FIRST_NAME|friend}}}, your plan is {{{PLAN}}}.</p>', text: 'Hello {{{FIRST_NAME}}}',
      variables: [{ key: 'FIRST_NAME', type: 'string' }, { key: 'PLAN', type: 'string', fallbackValue: 'free' }],
    });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    const draft = await resend.templates.get(id);
    expect(draft.data).toMatchObject({
      object: 'template', id, name: 'Welcome', alias: 'welcome', status: 'draft', subject: 'Hi {{{FIRST_NAME|there}}}', from: `Acme <hello@${domain}>`, reply_to: ['help@example.com'],
      published_at: null, has_unpublished_versions: false, variables: [{ key: 'FIRST_NAME', type: 'string', fallback_value: null }, { key: 'PLAN', type: 'string', fallback_value: 'free' }],
    });
    expect((await resend.templates.publish('welcome')).data).toEqual({ object: 'template', id });
    expect((await resend.templates.get('welcome')).data).toMatchObject({ status: 'published', published_at: expect.any(String), has_unpublished_versions: false });

    // An edit opens a draft; the published version stays what sends use.
    expect((await resend.templates.update(id, { subject: 'Welcome, {{{FIRST_NAME|there}}}' })).data).toEqual({ object: 'template', id });
    expect((await resend.templates.get(id)).data).toMatchObject({ status: 'published', subject: 'Welcome, {{{FIRST_NAME|there}}}', has_unpublished_versions: true });

    const copy = await resend.templates.duplicate(id);
    expect((await resend.templates.get(copy.data!.id)).data).toMatchObject({ name: 'Welcome (copy)', alias: 'welcome-copy', status: 'draft', subject: 'Welcome, {{{FIRST_NAME|there}}}' });
    const listed = await resend.templates.list();
    expect(listed.data!.data.map((t) => [t.name, t.status])).toEqual([['Welcome (copy)', 'draft'], ['Welcome', 'published']]);
    // /api/v1 sees the same template, by the alias as its slug.
    expect((await call(root.url, 'GET', '/api/v1/templates/welcome', { key })).body).toMatchObject({ id, latest_published_version: 1, draft: { version: 2 } });

    expect((await resend.templates.remove(copy.data!.id)).data).toEqual({ object: 'template', id: copy.data!.id, deleted: true });
    expect((await resend.templates.get(copy.data!.id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  it('creates and publishes in one chain, derives an alias from the name, and refuses bad content', async () => {
    const { resend } = await sender();
    const chained = await resend.templates.create({ name: 'Order Shipped!', subject: 'Shipped', html: '<p>{{{ORDER}}}</p>' }).publish();
    expect(chained.error).toBeNull();
    expect((await resend.templates.get(chained.data!.id)).data).toMatchObject({ alias: 'order-shipped', status: 'published' });
    const tag = await resend.templates.create({ name: 'Bad', subject: 'S', html: '<p>{{ nonsense }}</p>' }).publish();
    expect(tag.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect((tag.error as any).error.code).toBe('invalid_template_tag');
    const fallback = await resend.templates.create({ name: 'Typed', html: 'x', variables: [{ key: 'N', type: 'number', fallbackValue: 'one' as any }] });
    expect((fallback.error as any).error.code).toBe('fallback_type_mismatch');
    // An alias is a slug as /api/v1 takes it: lower-case letters, digits and hyphens.
    for (const alias of ['Order-Shipped', 'order_shipped']) {
      expect((await resend.templates.create({ name: 'Alias', alias, html: 'x' })).error, alias).toMatchObject({ name: 'validation_error', statusCode: 400 });
    }
    const taken = await resend.templates.create({ name: 'Again', alias: 'order-shipped', html: 'x' });
    expect(taken.error).toMatchObject({ statusCode: 409 });
    expect((await resend.templates.create({ html: 'x' } as any)).error).toMatchObject({ name: 'missing_required_field', statusCode: 422 });
  });
});

describe('resend.emails with Resend\'s additions', () => {
  it('sends a published template with variables: subject, From, Reply-To and parts come from it, filled and escaped', async () => {
    const { resend, domain } = await sender();
    const template = await resend.templates.create({
      name: 'Receipt', from: `Shop <shop@${domain}>`, replyTo: ['help@example.com'], subject: 'Receipt for {{{NAME|you}}}',
      html: '<p>Thanks {{{NAME}}}: {{{TOTAL}}} EUR, plan {{{PLAN}}}, {{{MISSING|none}}}</p>', text: 'Thanks {{{NAME}}}: {{{TOTAL}}} EUR',
      variables: [{ key: 'NAME', type: 'string' }, { key: 'TOTAL', type: 'number' }, { key: 'PLAN', type: 'string', fallbackValue: 'basic' }],
    }).publish();
    const sent = await resend.emails.send({ to: 'buyer@example.com', template: { id: template.data!.id, variables: { NAME: 'Ada <admin>', TOTAL: 12.5 } } } as any);
    expect(sent.error).toBeNull();
    const email = (await resend.emails.get(sent.data!.id)).data as any;
    expect(email).toMatchObject({
      from: `Shop <shop@${domain}>`, reply_to: ['help@example.com'], subject: 'Receipt for Ada <admin>',
      html: '<p>Thanks Ada &lt;admin&gt;: 12.5 EUR, plan basic, none</p>', text: 'Thanks Ada <admin>: 12.5 EUR',
    });
    // The request's own subject and From win over the template's.
    const own = await resend.emails.send({ from: `Other <other@${domain}>`, to: 'b@example.com', subject: 'Yours {{{NAME}}}', template: { id: template.data!.id, variables: { NAME: 'Bo' } } } as any);
    expect((await resend.emails.get(own.data!.id)).data).toMatchObject({ from: `Other <other@${domain}>`, subject: 'Yours Bo' });
  });

  it('refuses a draft template, another organization\'s, and a template with html', async () => {
    const { resend, organizationId, domain } = await sender();
    const draft = (await resend.templates.create({ name: 'Draft', subject: 'S', html: 'x', from: `a@${domain}` })).data!;
    const unpublished = await resend.emails.send({ to: 'a@example.com', template: { id: draft.id } } as any);
    // /emails names errors as Resend does (name), our code in error.code.
    expect(unpublished.error).toMatchObject({ name: 'validation_error', statusCode: 422, error: { code: 'template_version_not_published' } });
    const { resend: neighbour } = await sender();
    const theirs = (await neighbour.templates.create({ name: 'Theirs', subject: 'S', html: 'x' }).publish()).data!;
    expect((await resend.emails.send({ from: `a@${domain}`, to: 'a@example.com', template: { id: theirs.id } } as any)).error).toMatchObject({ name: 'not_found', statusCode: 404, error: { code: 'template_not_found' } });
    expect((await neighbour.templates.get(draft.id)).error).toMatchObject({ name: 'not_found' });
    const both = await resend.emails.send({ from: `a@${domain}`, to: 'a@example.com', html: 'x', template: { id: draft.id } } as any);
    expect((both.error as any).error.code).toBe('template_with_content');
    expect(await storedCount(root.ingress.platform.pg, organizationId)).toBe(0);
  });

  it('takes scheduled_at in English as Resend does, and ISO 8601; refuses what it cannot read', async () => {
    const { resend, domain } = await sender();
    const from = `a@${domain}`;
    const before = Date.now();
    const inAnHour = await resend.emails.send({ from, to: 'a@example.com', subject: 'Later', text: 'x', scheduledAt: 'in 1 hour' });
    const scheduled = (await resend.emails.get(inAnHour.data!.id)).data!;
    expect(scheduled.last_event).toBe('scheduled');
    const at = Date.parse(scheduled.scheduled_at!);
    expect(at).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
    const tomorrow = await resend.emails.send({ from, to: 'a@example.com', subject: 'Tomorrow', text: 'x', scheduledAt: 'tomorrow at 9am' });
    const expected = new Date(); expected.setUTCHours(24 + 9, 0, 0, 0);
    expect((await resend.emails.get(tomorrow.data!.id)).data!.scheduled_at).toBe(expected.toISOString());
    // Rescheduled in English too.
    expect((await resend.emails.update({ id: tomorrow.data!.id, scheduledAt: 'in 2 days' })).error).toBeNull();
    expect(Date.parse((await resend.emails.get(tomorrow.data!.id)).data!.scheduled_at!)).toBeGreaterThan(Date.now() + 2 * 86_400_000 - 5000);
    const iso = await resend.emails.send({ from, to: 'a@example.com', subject: 'ISO', text: 'x', scheduledAt: '2035-01-02T03:04:05+01:00' });
    expect((await resend.emails.get(iso.data!.id)).data!.scheduled_at).toBe('2035-01-02T02:04:05.000Z');
    const bad = await resend.emails.send({ from, to: 'a@example.com', subject: 'Bad', text: 'x', scheduledAt: 'whenever you like' });
    expect(bad.error).toMatchObject({ name: 'validation_error', statusCode: 400, error: { code: 'invalid_scheduled_at' } });
  });

  it('fills {{{constructor}}} and other Object.prototype names from the request\'s own variables only', async () => {
    const { resend, domain } = await sender();
    const template = await resend.templates.create({ name: 'Proto', subject: 'S', html: 'x', text: '[{{{constructor|none}}}] [{{{toString}}}] [{{{hasOwnProperty|x}}}]' }).publish();
    const sent = await resend.emails.send({ from: `a@${domain}`, to: 'a@example.com', template: { id: template.data!.id, variables: { hasOwnProperty: 'own' } } } as any);
    expect(sent.error).toBeNull();
    const { rows } = await root.ingress.platform.pg.query('SELECT text_body FROM mail_messages WHERE id = $1', [sent.data!.id]);
    expect(rows[0].text_body).toBe('[none] [] [own]');
  });

  it('refuses a template whose filled variables pass 2 MB as content_too_large, as an oversized html is', async () => {
    const { resend, domain } = await sender();
    const from = `a@${domain}`;
    const template = await resend.templates.create({ name: 'Big', subject: 'S', html: '{{{A}}}'.repeat(600) }).publish();
    expect(template.error).toBeNull();
    const big = await resend.emails.send({ from, to: 'a@example.com', template: { id: template.data!.id, variables: { A: 'x'.repeat(4096) } } } as any);
    const html = await resend.emails.send({ from, to: 'a@example.com', subject: 'S', html: 'x'.repeat(2 * 1024 * 1024 + 1) });
    expect(html.error).toMatchObject({ statusCode: 400 });
    expect(big.error).toMatchObject({ statusCode: html.error!.statusCode, name: html.error!.name });
    expect((big.error as any).error.code).toBe('content_too_large');
  });

  it('refuses a scheduled_at past year 9999 ("in 999999 weeks") as invalid_scheduled_at on send, batch and reschedule', async () => {
    const { resend, key, domain } = await sender();
    const from = `a@${domain}`;
    const far = await call(root.url, 'POST', '/emails', { key, body: { from, to: 'a@example.com', subject: 'Far', text: 'x', scheduled_at: 'in 999999 weeks' } });
    expect(far.status).toBe(400);
    expect(far.body.error.code).toBe('invalid_scheduled_at');
    const batch = await call(root.url, 'POST', '/emails/batch', { key, body: [{ from, to: 'a@example.com', subject: 'Far', text: 'x', scheduled_at: 'in 999999 weeks' }] });
    expect(batch.status).toBe(400);
    const later = await resend.emails.send({ from, to: 'a@example.com', subject: 'Later', text: 'x', scheduledAt: 'in 1 hour' });
    const moved = await call(root.url, 'PATCH', `/emails/${later.data!.id}`, { key, body: { scheduled_at: 'in 999999 weeks' } });
    expect([moved.status, moved.body.error.code]).toEqual([400, 'invalid_scheduled_at']);
  });

  it('checks topic_id: the organization\'s topic by id or slug; another\'s, or none, is 422 topic_not_found and nothing is stored', async () => {
    const { resend, key, organizationId, domain } = await sender();
    const from = `a@${domain}`;
    const topic = (await call(root.url, 'POST', '/api/v1/topics', { key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } })).body;
    expect((await resend.emails.send({ from, to: 'a@example.com', subject: 'S', text: 'x', topicId: topic.id })).error).toBeNull();
    expect((await resend.emails.send({ from, to: 'a@example.com', subject: 'S', text: 'x', topicId: 'news' })).error).toBeNull();
    const stored = await storedCount(root.ingress.platform.pg, organizationId);

    const { key: otherKey } = await sender();
    const foreign = (await call(root.url, 'POST', '/api/v1/topics', { key: otherKey, body: { slug: 'offers', name: 'Offers', default_subscription: 'opt_in' } })).body;
    for (const topicId of [foreign.id, 'offers', '00000000-0000-4000-8000-000000000000']) {
      const refused = await resend.emails.send({ from, to: 'a@example.com', subject: 'S', text: 'x', topicId });
      expect(refused.error, topicId).toMatchObject({ name: 'validation_error', statusCode: 422, error: { code: 'topic_not_found' } });
    }
    await nextSecond();
    const batch = await resend.batch.send([{ from, to: 'a@example.com', subject: 'S', text: 'x' }, { from, to: 'b@example.com', subject: 'S', text: 'x', topicId: foreign.id }]);
    expect(batch.error).toMatchObject({ name: 'validation_error', statusCode: 422, error: { code: 'topic_not_found' } });
    expect((batch.error as any).error.details[0].path).toBe('/1/topic_id');
    expect(await storedCount(root.ingress.platform.pg, organizationId)).toBe(stored);
  });
  it('judges an idempotency key on the request as sent (template id and variables), not on what the template filled in', async () => {
    const { resend, key, organizationId, domain } = await sender();
    const template = (await resend.templates.create({ name: 'Order', from: `Shop <shop@${domain}>`, subject: 'Order {{{N}}}', html: '<p>Order {{{N}}}</p>' }).publish()).data!;
    const request = { to: 'buyer@example.com', template: { id: template.id, variables: { N: 7 } } } as any;
    const first = await resend.emails.send(request, { idempotencyKey: 'order-7' });
    expect(first.error).toBeNull();
    // The template is edited and published again between the two calls: the same request is still a replay.
    await resend.templates.update(template.id, { html: '<p>Your order {{{N}}}</p>' });
    await resend.templates.publish(template.id);
    const again = await resend.emails.send(request, { idempotencyKey: 'order-7' });
    expect(again).toMatchObject({ data: { id: first.data!.id }, error: null });
    // Another request under the key (other variables, the same rendered subject or not) is a conflict, in a batch too.
    const other = await resend.emails.send({ ...request, template: { id: template.id, variables: { N: 8 } } }, { idempotencyKey: 'order-7' });
    expect(other.error).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    // A batch item's key likewise: sent, the template edited, sent again: the same id.
    const item = { ...request, idempotency_key: 'order-9' };
    const batched = await call(root.url, 'POST', '/emails/batch', { key, body: [item] });
    expect(batched.status).toBe(200);
    await resend.templates.update(template.id, { html: '<p>Order number {{{N}}}</p>' });
    await resend.templates.publish(template.id);
    await nextSecond(); // one batch a second per key
    const rebatched = await call(root.url, 'POST', '/emails/batch', { key, body: [item] });
    expect(rebatched.body.data).toEqual(batched.body.data);
    // A replay even once the template is gone: the key names a message already made.
    expect((await resend.templates.remove(template.id)).error).toBeNull();
    expect((await resend.emails.send(request, { idempotencyKey: 'order-7' })).data).toEqual({ id: first.data!.id });
    expect(await storedCount(root.ingress.platform.pg, organizationId)).toBe(2);
  });
});
