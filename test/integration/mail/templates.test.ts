// Templates with versions through the real ingress: drafts, publish, immutability, references and preview.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { mailKey, organizationWithKey } from '../../support/mail/organizations.ts';
import { Templates } from '../../../src/mail/templates/templates.ts';

let ingress: TestIngress;
let url: string;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  url = ingress.url;
});
afterAll(async () => ingress?.close());

describe('templates', () => {
  it('a draft is edited, published as version 1, and later edits open version 2 without changing 1', async () => {
    const { organizationId, key } = await organizationWithKey(url);
    const created = await call(url, 'POST', '/api/v1/templates', { key, body: { slug: 'welcome', name: 'Welcome', subject: 'Hi {{contact.first_name | "there"}}', html: '<p>Hello {{contact.first_name}}</p>' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'template', slug: 'welcome', latest_published_version: null, draft: { version: 1, published_at: null } });
    await call(url, 'PATCH', '/api/v1/templates/welcome', { key, body: { text: 'Hello {{contact.first_name}}' } });
    const v1 = await call(url, 'POST', '/api/v1/templates/welcome/publish', { key });
    expect(v1.body).toMatchObject({ version: 1, text: 'Hello {{contact.first_name}}' });
    expect(v1.body.published_at).not.toBeNull();
    expect((await call(url, 'POST', '/api/v1/templates/welcome/publish', { key })).body.name).toBe('nothing_to_publish');

    const edited = await call(url, 'PATCH', `/api/v1/templates/${created.body.id}`, { key, body: { subject: 'Welcome aboard' } });
    expect(edited.body).toMatchObject({ latest_published_version: 1, draft: { version: 2, subject: 'Welcome aboard', html: '<p>Hello {{contact.first_name}}</p>' } });
    expect((await call(url, 'GET', '/api/v1/templates/welcome/versions/1', { key })).body.subject).toBe('Hi {{contact.first_name | "there"}}');
    expect((await call(url, 'GET', '/api/v1/templates/welcome/versions', { key })).body.data.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    // References name published versions only.
    const templates = new Templates(ingress.platform.pg);
    expect(await templates.resolve(organizationId, { slug: 'welcome' })).toMatchObject({ ok: true, template: { version: 1, subject: 'Hi {{contact.first_name | "there"}}' } });
    expect(await templates.resolve(organizationId, { slug: 'welcome', version: 2 })).toEqual({ ok: false, refusal: { reason: 'template_version_not_published', asked: 2, draft: true } });
    expect(await templates.resolve(organizationId, { slug: 'welcome', version: 9 })).toEqual({ ok: false, refusal: { reason: 'template_version_not_published', asked: 9, draft: false } });
    expect(await templates.resolve(organizationId, { slug: 'nope' })).toEqual({ ok: false, refusal: { reason: 'template_not_found' } });
    await call(url, 'POST', '/api/v1/templates/welcome/publish', { key });
    expect(await templates.resolve(organizationId, { id: created.body.id, version: 'latest' })).toMatchObject({ ok: true, template: { version: 2, subject: 'Welcome aboard' } });
    expect(await templates.resolve(organizationId, { id: created.body.id, version: 1 })).toMatchObject({ ok: true, template: { version: 1 } });
  });

  it('previews a published version for a sample contact', async () => {
    const { key } = await organizationWithKey(url);
    await call(url, 'POST', '/api/v1/templates', { key, body: { slug: 'promo', name: 'Promo', subject: 'For {{contact.first_name | "you"}}', html: '<p>{{contact.company}}</p>', text: '{{contact.company}}' } });
    expect((await call(url, 'POST', '/api/v1/templates/promo/render', { key, body: { contact: { email: 'a@example.com' } } })).body.name).toBe('template_version_not_published');
    await call(url, 'POST', '/api/v1/templates/promo/publish', { key });
    const rendered = await call(url, 'POST', '/api/v1/templates/promo/render', { key, body: { contact: { email: 'a@example.com', properties: { company: 'A&B <Co>' } } } });
    expect(rendered.body).toEqual({ object: 'rendered_template', version: 1, subject: 'For you', html: '<p>A&amp;B &lt;Co&gt;</p>', text: 'A&B <Co>' });
  });

  it('publishes the unsubscribe placeholders, kept as written for the sender to fill per recipient', async () => {
    const { key } = await organizationWithKey(url);
    const html = '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a> {{ contact.first_name | "there" }}';
    await call(url, 'POST', '/api/v1/templates', { key, body: { slug: 'footer', name: 'Footer', subject: 'S', html, text: 'Manage: {{unsubscribe_url}}' } });
    expect((await call(url, 'POST', '/api/v1/templates/footer/publish', { key })).status).toBe(200);
    const rendered = await call(url, 'POST', '/api/v1/templates/footer/render', { key, body: { contact: { email: 'a@example.com' } } });
    expect(rendered.body).toMatchObject({ html: '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a> there', text: 'Manage: {{unsubscribe_url}}' });
  });

  it('refuses incomplete drafts, unknown tags at publish, bad fields, and keeps organizations apart', async () => {
    const { organizationId, key } = await organizationWithKey(url);
    await call(url, 'POST', '/api/v1/templates', { key, body: { slug: 'empty', name: 'Empty' } });
    expect((await call(url, 'POST', '/api/v1/templates/empty/publish', { key })).body.name).toBe('template_incomplete');
    await call(url, 'PATCH', '/api/v1/templates/empty', { key, body: { subject: 'S', html: '<p>{{unsubscribe_link}}</p>' } });
    const tag = await call(url, 'POST', '/api/v1/templates/empty/publish', { key });
    expect([tag.status, tag.body.name]).toEqual([400, 'invalid_template_tag']);
    expect(tag.body.message).toContain('{{unsubscribe_link}}');
    for (const [body, status] of [
      [{ slug: 'Bad Slug', name: 'x' }, 400],
      [{ slug: 'x', name: 'x', subject: 'a\nb' }, 400],
      [{ slug: 'x', name: 'x', html: 'x'.repeat(2 * 1024 * 1024 + 1) }, 400],
      [{ slug: 'x', name: 'x', body: 'y' }, 400],
      [{ slug: 'empty', name: 'again' }, 409],
    ] as const) expect((await call(url, 'POST', '/api/v1/templates', { key, body })).status, JSON.stringify(body).slice(0, 60)).toBe(status);
    const other = await organizationWithKey(url);
    expect((await call(url, 'GET', '/api/v1/templates/empty', { key: other.key })).status).toBe(404);
    const send = await mailKey(url, organizationId, { kind: 'send' });
    expect((await call(url, 'GET', '/api/v1/templates', { key: send.key })).body.name).toBe('insufficient_permissions');
    expect((await call(url, 'DELETE', '/api/v1/templates/empty', { key })).status).toBe(200);
    expect((await call(url, 'GET', '/api/v1/templates/empty', { key })).status).toBe(404);
  });
});
