// Fallbacks and start dates (issue 33, item 8), through real HTTP: a link that is
// deactivated, expired, out of scans or not valid yet sends visitors to its expiredUrl
// (a 302 that records no scan) instead of the refusal page; before validFrom it does
// not redirect; both fields through create, update, get, bulk and MCP; bad values are 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { freshIp, type TestIngress } from '../../support/ingress.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

let ingress: TestIngress, api: ApiClient, key: string;
beforeAll(async () => ({ ingress, api, key } = await ingressWithWorkspace()));
afterAll(() => ingress?.close());
const createLink = (body: Record<string, unknown>) => createdLink(api, body);

/** Waits until this ingress's cache has the link at `version` or later (after a change through the API it already has). */
const cached = (shortId: string, check: (l: any) => boolean) => eventually(async () => { const l = ingress.app.redirects.cache.get(shortId); return l !== undefined && check(l); }, 5000, 20);

/** The scans of the link in the topic, once `n` of them are there. */
async function scansOf(linkId: string, n: number): Promise<ScanEvent[]> {
  const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === linkId).length >= n);
  return messages.filter((m) => m.value.linkId === linkId).map((m) => m.value);
}

const FALLBACK = 'https://example.com/over?from=link';

describe('expiredUrl', () => {
  it('sends visitors of a deactivated link there (no svc_cid, the query forwarded, HEAD too), and records no scan', async () => {
    const link = await createLink({ destination: 'https://example.com/live', expiredUrl: FALLBACK });
    expect(link.expiredUrl).toBe(FALLBACK);
    expect((await api.delete(`/api/v1/links/${link.id}`)).status).toBe(200);
    await cached(link.shortId, (l) => !l.isActive);
    const res = await scan(ingress.url, `${link.shortId}?utm_source=print`);
    expect(res.status).toBe(302);
    expect(res.location).toBe('https://example.com/over?from=link&utm_source=print');
    expect(res.headers.get('cache-control')).toContain('no-store');
    const head = await fetch(`${ingress.url}/${link.shortId}`, { method: 'HEAD', redirect: 'manual', headers: { 'x-forwarded-for': freshIp() } });
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toBe(FALLBACK);

    // Active again: a scan. Only that one reaches the topic; the fallbacks recorded none.
    await api.patch(`/api/v1/links/${link.id}`, { isActive: true });
    await cached(link.shortId, (l) => l.isActive);
    const live = await scan(ingress.url, link.shortId);
    expect(live.location).toMatch(/^https:\/\/example\.com\/live\?svc_cid=/);
    const scans = await scansOf(link.id, 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await scansOf(link.id, 1)).length).toBe(1);
    expect(scans[0]!.destination).toBe('https://example.com/live');
  });

  it('sends visitors of an expired link and of a link out of scans there; without it they get the refusal', async () => {
    const expiring = await createLink({ destination: 'https://example.com/soon', expiresAt: new Date(Date.now() + 1500).toISOString(), expiredUrl: FALLBACK });
    const limited = await createLink({ destination: 'https://example.com/once', scanLimit: 1, expiredUrl: FALLBACK, forwardQuery: false });
    const plain = await createLink({ destination: 'https://example.com/plain', expiresAt: new Date(Date.now() + 1500).toISOString() });

    expect((await scan(ingress.url, limited.shortId)).location).toMatch(/^https:\/\/example\.com\/once\?svc_cid=/);
    const second = await scan(ingress.url, `${limited.shortId}?a=1`);
    expect(second.status).toBe(302);
    expect(second.location).toBe(FALLBACK);

    await new Promise((r) => setTimeout(r, 1600));
    expect((await scan(ingress.url, expiring.shortId)).location).toBe(FALLBACK);
    const refused = await scan(ingress.url, plain.shortId, { accept: 'application/json' });
    expect(refused.status).toBe(410);
    expect(JSON.parse(refused.body).error.code).toBe('link_expired');
  });

  it('is set, changed and cleared by PATCH and bulk, and refused when it is not a URL a link may point at', async () => {
    const link = await createLink({ destination: 'https://example.com/x' });
    expect(link.expiredUrl).toBeNull();
    const set = await api.patch(`/api/v1/links/${link.id}`, { expiredUrl: 'https://Example.com/gone' });
    expect(set.body.expiredUrl).toBe('https://example.com/gone');
    expect((await api.get(`/api/v1/links/${link.id}`)).body.expiredUrl).toBe('https://example.com/gone');
    const cleared = await api.patch(`/api/v1/links/${link.id}`, { expiredUrl: null });
    expect(cleared.body.expiredUrl).toBeNull();

    for (const [expiredUrl, code] of [['ftp://example.com/', 'invalid_url'], [`${new URL(link.shortUrl).origin}/other`, 'invalid_url'], ['https://u:p@example.com/', 'invalid_url'], ['not a url', 'validation_failed'], [42, 'validation_failed']] as const) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', expiredUrl });
      expect(res.status, String(expiredUrl)).toBe(400);
      expect(res.body.error.code).toBe(code);
      if (code === 'invalid_url') expect(res.body.error.details[0].path).toBe('/expiredUrl');
    }
    const bulk = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/b', expiredUrl: FALLBACK } },
        { action: 'update', id: link.id, changes: { expiredUrl: FALLBACK } },
        { action: 'update', id: link.id, changes: { expiredUrl: 'javascript:alert(1)' } },
      ],
    });
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200, 400]);
    expect(bulk.body.results[0].link.expiredUrl).toBe(FALLBACK);
    expect(bulk.body.results[2].error.code).toBe('invalid_url');
  });
});

describe('validFrom', () => {
  it('before it the link answers 404 link_not_yet_valid, or its expiredUrl; from it the link redirects', async () => {
    const from = new Date(Date.now() + 1500);
    const link = await createLink({ destination: 'https://example.com/launch', validFrom: from.toISOString() });
    expect(link.validFrom).toBe(from.toISOString());
    const early = await scan(ingress.url, link.shortId, { accept: 'application/json' });
    expect(early.status).toBe(404);
    expect(JSON.parse(early.body).error.code).toBe('link_not_yet_valid');
    const page = await scan(ingress.url, link.shortId, { accept: 'text/html' });
    expect(page.body).toContain('not active yet');

    const teaser = await createLink({ destination: 'https://example.com/launch', validFrom: from.toISOString(), expiredUrl: 'https://example.com/coming-soon' });
    expect((await scan(ingress.url, teaser.shortId)).location).toBe('https://example.com/coming-soon');

    await new Promise((r) => setTimeout(r, Math.max(0, from.getTime() - Date.now()) + 100));
    expect((await scan(ingress.url, link.shortId)).location).toMatch(/^https:\/\/example\.com\/launch\?svc_cid=/);
    expect((await scan(ingress.url, teaser.shortId)).location).toMatch(/^https:\/\/example\.com\/launch\?svc_cid=/);
  });

  it('may be in the past, is changed and cleared by PATCH, and must come before expiresAt (400 valid_from_after_expiry)', async () => {
    const past = await createLink({ destination: 'https://example.com/past', validFrom: '2020-01-01T00:00:00Z' });
    expect(past.validFrom).toBe('2020-01-01T00:00:00.000Z');
    expect((await scan(ingress.url, past.shortId)).status).toBe(302);

    const later = new Date(Date.now() + 3_600_000).toISOString();
    const closed = await api.patch(`/api/v1/links/${past.id}`, { validFrom: later });
    expect(closed.body.validFrom).toBe(later);
    await cached(past.shortId, (l) => l.validFrom === Date.parse(later));
    expect((await scan(ingress.url, past.shortId, { accept: 'application/json' })).status).toBe(404);
    const open = await api.patch(`/api/v1/links/${past.id}`, { validFrom: null });
    expect(open.body.validFrom).toBeNull();
    await cached(past.shortId, (l) => l.validFrom === null);
    expect((await scan(ingress.url, past.shortId)).status).toBe(302);

    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const both = await api.post('/api/v1/links', { destination: 'https://example.com/', validFrom: expiresAt, expiresAt });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'valid_from_after_expiry', details: [{ path: '/validFrom' }] });
    // Against the stored expiry, and the stored start: refused, nothing changed.
    const link = await createLink({ destination: 'https://example.com/', expiresAt });
    const afterExpiry = await api.patch(`/api/v1/links/${link.id}`, { validFrom: new Date(Date.parse(expiresAt) + 1000).toISOString(), tags: ['x'] });
    expect(afterExpiry.status).toBe(400);
    expect(afterExpiry.body.error.code).toBe('valid_from_after_expiry');
    expect((await api.get(`/api/v1/links/${link.id}`)).body).toMatchObject({ validFrom: null, tags: [] });
    await api.patch(`/api/v1/links/${link.id}`, { validFrom: later });
    const expiryFirst = await api.patch(`/api/v1/links/${link.id}`, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect(expiryFirst.status).toBe(400);
    expect(expiryFirst.body.error.code).toBe('valid_from_after_expiry');

    for (const validFrom of ['tomorrow', 17, '2026-13-01T00:00:00Z']) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', validFrom });
      expect(res.status, String(validFrom)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('is offered, with expiredUrl, by bulk and the MCP create_link tool', async () => {
    const from = new Date(Date.now() + 3_600_000).toISOString();
    const bulk = await api.post('/api/v1/links/bulk', { operations: [{ action: 'create', link: { destination: 'https://example.com/b', validFrom: from } }] });
    expect(bulk.body.results[0]).toMatchObject({ status: 201, link: { validFrom: from } });

    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } } }));
    try {
      const result = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/event', validFrom: from, expiredUrl: 'https://example.com/soon' } });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const link = (result.structuredContent as { link: { shortId: string; validFrom: string; expiredUrl: string } }).link;
      expect(link).toMatchObject({ validFrom: from, expiredUrl: 'https://example.com/soon' });
      expect((await scan(ingress.url, link.shortId)).location).toBe('https://example.com/soon');
      const bad = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/', validFrom: from, expiresAt: from } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as { text: string }[])[0]!.text).error.code).toBe('valid_from_after_expiry');
    } finally {
      await mcp.close();
    }
  });
});
