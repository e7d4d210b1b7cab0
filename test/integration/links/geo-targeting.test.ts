// Geo targeting (issue 33, item 2), through real HTTP: a link's `geo` sends visitors from a
// country (of their IP, DB-IP's database) to that country's URL; device URLs win over it,
// it wins over A/B variants, other countries get the destination; through create,
// update, get, bulk and MCP; bad country codes and URLs are 400s.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { freshIp, type TestIngress } from '../../support/ingress.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { readTopic } from '../../support/topic-reader.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';

// Networks whose every /64 DB-IP places in one country: a fresh /64 each time, so no per-IP limit is shared.
const hex16 = () => randomBytes(2).toString('hex');
const from = {
  DE: () => `2a01:4f8:${hex16()}:${hex16()}::1`,
  FR: () => `2a01:e0a:${hex16()}:${hex16()}::1`,
  GB: () => `2001:8b0:${hex16()}:${hex16()}::1`,
  // The documentation range: no country.
  nowhere: freshIp,
};

let ingress: TestIngress, api: ApiClient, key: string;
beforeAll(async () => ({ ingress, api, key } = await ingressWithWorkspace()));
afterAll(() => ingress?.close());
const createLink = (body: Record<string, unknown>) => createdLink(api, body);

const visit = (shortId: string, ip: string, ua?: string) => scan(ingress.url, shortId, { 'x-forwarded-for': ip, ...(ua ? { 'user-agent': ua } : {}) });

describe('geo destinations', () => {
  it('send each country to its URL (country codes stored upper-case), other and unknown countries to the destination', async () => {
    const link = await createLink({ destination: 'https://example.com/world', geo: { de: 'https://example.de/', FR: 'https://Example.fr/accueil?x=1' } });
    expect(link.geo).toEqual({ DE: 'https://example.de/', FR: 'https://example.fr/accueil?x=1' });
    expect((await visit(link.shortId, from.DE())).location).toMatch(/^https:\/\/example\.de\/\?svc_cid=/);
    expect((await visit(link.shortId, from.FR())).location).toMatch(/^https:\/\/example\.fr\/accueil\?x=1&svc_cid=/);
    expect((await visit(link.shortId, from.GB())).location).toMatch(/^https:\/\/example\.com\/world\?svc_cid=/);
    expect((await visit(link.shortId, from.nowhere())).location).toMatch(/^https:\/\/example\.com\/world\?svc_cid=/);
    // Forwarding applies to the country's URL too.
    const forwarded = await scan(ingress.url, `${link.shortId}?utm_source=print`, { 'x-forwarded-for': from.DE() });
    expect(forwarded.location).toMatch(/^https:\/\/example\.de\/\?utm_source=print&svc_cid=/);

    // The scan records the URL chosen and the country.
    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.filter((x) => x.value.linkId === link.id).length >= 5);
    const events = messages.filter((m) => m.value.linkId === link.id).map((m) => m.value);
    expect(events.filter((e) => e.country === 'DE').every((e) => e.destination === 'https://example.de/')).toBe(true);
    expect(events.find((e) => e.country === 'GB')!.destination).toBe('https://example.com/world');
  });

  it('come after the device URLs and before the A/B variants', async () => {
    const link = await createLink({
      destination: 'https://example.com/default',
      iosUrl: 'https://apps.apple.com/app/id1',
      geo: { DE: 'https://example.de/' },
      testVariants: [{ url: 'https://example.com/a', percent: 50 }, { url: 'https://example.com/b', percent: 50 }],
    });
    expect((await visit(link.shortId, from.DE(), IPHONE)).location).toMatch(/^https:\/\/apps\.apple\.com\/app\/id1\?svc_cid=/);
    // No Android URL: the country's.
    expect((await visit(link.shortId, from.DE(), ANDROID)).location).toMatch(/^https:\/\/example\.de\/\?svc_cid=/);
    expect((await visit(link.shortId, from.DE())).location).toMatch(/^https:\/\/example\.de\/\?svc_cid=/);
    // No entry for the country: a variant.
    expect((await visit(link.shortId, from.GB())).location).toMatch(/^https:\/\/example\.com\/[ab]\?svc_cid=/);
  });

  it('are changed and cleared by PATCH ({} or null) and bulk, and shown by GET', async () => {
    const link = await createLink({ destination: 'https://example.com/p' });
    expect(link.geo).toBeNull();
    const set = await api.patch(`/api/v1/links/${link.id}`, { geo: { FR: 'https://example.fr/' } });
    expect(set.body.geo).toEqual({ FR: 'https://example.fr/' });
    await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.geo?.FR !== undefined, 5000, 20);
    expect((await visit(link.shortId, from.FR())).location).toMatch(/^https:\/\/example\.fr\//);
    expect((await api.get(`/api/v1/links/${link.id}`)).body.geo).toEqual({ FR: 'https://example.fr/' });
    expect((await api.patch(`/api/v1/links/${link.id}`, { geo: {} })).body.geo).toBeNull();
    await eventually(async () => Object.keys(ingress.app.redirects.cache.get(link.shortId)?.geo ?? { x: 1 }).length === 0, 5000, 20);
    expect((await visit(link.shortId, from.FR())).location).toMatch(/^https:\/\/example\.com\/p\?/);

    const bulk = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/b', geo: { GB: 'https://example.co.uk/' } } },
        { action: 'update', id: link.id, changes: { geo: { DE: 'https://example.de/' } } },
        { action: 'update', id: link.id, changes: { geo: { XX: 'https://example.de/' } } },
        { action: 'update', id: link.id, changes: { geo: null } },
      ],
    });
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200, 400, 200]);
    expect(bulk.body.results[0].link.geo).toEqual({ GB: 'https://example.co.uk/' });
    expect(bulk.body.results[2].error.code).toBe('invalid_country');
    expect(bulk.body.results[3].link.geo).toBeNull();
  });

  it('refuse what is not a country code or a URL a link may point at, with 400 and a stable code, changing nothing', async () => {
    const own = new URL((await createLink({ destination: 'https://example.com/' })).shortUrl).origin;
    const cases: [unknown, string, string?][] = [
      [{ XX: 'https://example.com/' }, 'invalid_country', '/geo/XX'],
      [{ DEU: 'https://example.com/' }, 'invalid_country', '/geo/DEU'],
      [{ UK: 'https://example.com/' }, 'invalid_country', '/geo/UK'],
      [{ DE: 'ftp://example.com/' }, 'invalid_url', '/geo/DE'],
      [{ DE: `${own}/loop` }, 'invalid_url', '/geo/DE'],
      [{ DE: 'https://user:pw@example.com/' }, 'invalid_url', '/geo/DE'],
      [{ DE: 5 }, 'validation_failed'],
      [{ DE: 'has space' }, 'validation_failed'],
      [['https://example.com/'], 'validation_failed'],
      ['DE', 'validation_failed'],
    ];
    for (const [geo, code, path] of cases) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', geo });
      expect(res.status, JSON.stringify(geo)).toBe(400);
      expect(res.body.error.code, JSON.stringify(geo)).toBe(code);
      if (path) expect(res.body.error.details[0].path).toBe(path);
    }
    const many = Object.fromEntries(Array.from({ length: 251 }, (_, i) => [`K${i}`, 'https://example.com/']));
    expect((await api.post('/api/v1/links', { destination: 'https://example.com/', geo: many })).status).toBe(400);
  });

  it('are offered by the MCP create_link tool, with its errors as REST gives them', async () => {
    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } } }));
    try {
      const result = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/mcp', geo: { GB: 'https://example.co.uk/' } } });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const link = (result.structuredContent as { link: { shortId: string; geo: unknown } }).link;
      expect(link.geo).toEqual({ GB: 'https://example.co.uk/' });
      expect((await visit(link.shortId, from.GB())).location).toMatch(/^https:\/\/example\.co\.uk\/\?svc_cid=/);
      const bad = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/', geo: { ZZ: 'https://example.com/' } } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as { text: string }[])[0]!.text).error.code).toBe('invalid_country');
    } finally {
      await mcp.close();
    }
  });
});
