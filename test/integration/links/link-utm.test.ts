// UTM on a link (issue 43, item 5), through real HTTP: `utm` on create, PATCH and
// bulk; the redirect appends utm_* to the destination (device, country and A/B
// destinations too) except those the destination already has, before the
// forwarded query and svc_cid; bad values are 400s that change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestIngress } from '../../support/ingress.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
// A network DB-IP places in Germany (as geo-targeting.test.ts), a fresh /64 each time.
const fromGermany = () => `2a01:4f8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
const CID = '[A-Za-z0-9_-]{84}';

let ingress: TestIngress, api: ApiClient;
beforeAll(async () => ({ ingress, api } = await ingressWithWorkspace()));
afterAll(() => ingress?.close());

describe('UTM on a link', () => {
  it('is appended on the redirect in a fixed order, encoded, before the visitor\'s query and svc_cid, the fragment kept', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/menu?own=1#top', utm: { campaign: 'spring sale', source: 'flyer', medium: 'qr', content: 'a&b=c' } });
    expect(link.utm).toEqual({ source: 'flyer', medium: 'qr', campaign: 'spring sale', content: 'a&b=c' });
    expect((await api.get(`/api/v1/links/${link.id}`)).body.utm).toEqual(link.utm);
    const res = await scan(ingress.url, `${link.shortId}?table=12`);
    expect(res.status).toBe(302);
    expect(res.location).toMatch(new RegExp(`^https://example\\.com/menu\\?own=1&utm_source=flyer&utm_medium=qr&utm_campaign=spring%20sale&utm_content=a%26b%3Dc&table=12&svc_cid=${CID}#top$`));
    // A link without UTM: nothing added.
    const plain = await createdLink(api, { destination: 'https://example.com/plain' });
    expect(plain.utm).toBeNull();
    expect((await scan(ingress.url, plain.shortId)).location).toMatch(new RegExp(`^https://example\\.com/plain\\?svc_cid=${CID}$`));
  });

  it('leaves out the parameters the destination already has, whatever their value', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/p?utm_source=newsletter&utm_medium=', utm: { source: 'flyer', medium: 'qr', term: 'menu' } });
    expect((await scan(ingress.url, link.shortId)).location).toMatch(new RegExp(`^https://example\\.com/p\\?utm_source=newsletter&utm_medium=&utm_term=menu&svc_cid=${CID}$`));
  });

  it('applies to device, country and A/B destinations too, each checked against its own query', async () => {
    const link = await createdLink(api, {
      destination: 'https://example.com/default',
      iosUrl: 'https://apps.apple.com/app/id1?utm_source=appstore',
      geo: { DE: 'https://example.de/start' },
      utm: { source: 'poster', campaign: 'c1' },
    });
    expect((await scan(ingress.url, link.shortId, { 'user-agent': IPHONE })).location).toMatch(new RegExp(`^https://apps\\.apple\\.com/app/id1\\?utm_source=appstore&utm_campaign=c1&svc_cid=${CID}$`));
    expect((await scan(ingress.url, link.shortId, { 'x-forwarded-for': fromGermany() })).location).toMatch(new RegExp(`^https://example\\.de/start\\?utm_source=poster&utm_campaign=c1&svc_cid=${CID}$`));
    expect((await scan(ingress.url, link.shortId)).location).toMatch(new RegExp(`^https://example\\.com/default\\?utm_source=poster&utm_campaign=c1&svc_cid=${CID}$`));
    const ab = await createdLink(api, { destination: 'https://example.com/x', testVariants: [{ url: 'https://a.example.com/', percent: 50 }, { url: 'https://b.example.com/?v=b', percent: 50 }], utm: { medium: 'qr' } });
    expect((await scan(ingress.url, ab.shortId)).location).toMatch(new RegExp(`^https://[ab]\\.example\\.com/(\\?v=b&|\\?)utm_medium=qr&svc_cid=${CID}$`));
  });

  it('PATCH replaces the UTM object, {} or null removes it; the redirect follows', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/patch', utm: { source: 'a', medium: 'b' } });
    const changed = await api.patch(`/api/v1/links/${link.id}`, { utm: { campaign: 'new' } });
    expect([changed.status, changed.body.utm]).toEqual([200, { campaign: 'new' }]);
    await eventually(async () => (await scan(ingress.url, link.shortId)).location?.startsWith('https://example.com/patch?utm_campaign=new&svc_cid=') ?? false);
    // Changing something else keeps it.
    expect((await api.patch(`/api/v1/links/${link.id}`, { tags: ['x'] })).body.utm).toEqual({ campaign: 'new' });
    expect((await api.patch(`/api/v1/links/${link.id}`, { utm: {} })).body.utm).toBeNull();
    await eventually(async () => /^https:\/\/example\.com\/patch\?svc_cid=/.test((await scan(ingress.url, link.shortId)).location ?? ''));
    expect((await api.patch(`/api/v1/links/${link.id}`, { utm: { term: 't' } })).body.utm).toEqual({ term: 't' });
    expect((await api.patch(`/api/v1/links/${link.id}`, { utm: null })).body.utm).toBeNull();
  });

  it('works through bulk create and update', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/bulk' });
    const res = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/bulk-new', utm: { source: 'bulk' } } },
        { action: 'update', id: link.id, changes: { utm: { medium: 'email' } } },
        { action: 'create', link: { destination: 'https://example.com/bad', utm: { source: 'x'.repeat(201) } } },
      ],
    });
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200, 400]);
    expect(res.body.results[0].link.utm).toEqual({ source: 'bulk' });
    expect(res.body.results[1].link.utm).toEqual({ medium: 'email' });
    expect(res.body.results[2].error.code).toBe('validation_failed');
    expect((await scan(ingress.url, res.body.results[0].link.shortId)).location).toMatch(/^https:\/\/example\.com\/bulk-new\?utm_source=bulk&svc_cid=/);
  });

  it('refuses bad UTM values with 400 validation_failed and changes nothing', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/bad', utm: { source: 'kept' } });
    const bad: [unknown, string][] = [
      [{ source: '' }, 'validation_failed'], [{ source: 'x'.repeat(201) }, 'validation_failed'], [{ source: 'a\nb' }, 'validation_failed'],
      [{ source: 'tab\there' }, 'validation_failed'], [{ medium: 5 }, 'validation_failed'], ['source=x', 'validation_failed'], [['x'], 'validation_failed'],
      [{ utm_source: 'x' }, 'unknown_field'], [{ gclid: 'x' }, 'unknown_field'],
    ];
    for (const [utm, code] of bad) {
      const created = await api.post('/api/v1/links', { destination: 'https://example.com/refused', utm });
      expect([created.status, created.body.error?.code], JSON.stringify(utm)).toEqual([400, code]);
      const patched = await api.patch(`/api/v1/links/${link.id}`, { utm });
      expect([patched.status, patched.body.error?.code], JSON.stringify(utm)).toEqual([400, code]);
    }
    expect((await api.get(`/api/v1/links/${link.id}`)).body.utm).toEqual({ source: 'kept' });
    expect((await api.get('/api/v1/links?q=refused')).body.data).toEqual([]);
    // 200 characters, any printable text: accepted.
    const long = await createdLink(api, { destination: 'https://example.com/long', utm: { term: 'é'.repeat(200) } });
    expect(long.utm.term).toHaveLength(200);
  });
});
