// Query forwarding and click IDs per link (issue 33, item 6), through real HTTP: the short
// URL's query string goes to the destination after its own parameters (on by default,
// off with forwardQuery: false), svc_cid after both unless clickId: false; through
// create, update, get, list, bulk and the MCP create_link tool; bad values are 400s.
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

const CID = '[A-Za-z0-9_-]{84}';

describe('query forwarding', () => {
  it('is on by default: the short URL\'s query follows the destination\'s own parameters, svc_cid comes last, the fragment stays', async () => {
    const link = await createLink({ destination: 'https://example.com/menu?own=1#top' });
    expect(link).toMatchObject({ forwardQuery: true, clickId: true });
    const res = await scan(ingress.url, `${link.shortId}?utm_source=print&table=12`);
    expect(res.status).toBe(302);
    expect(res.location).toMatch(new RegExp(`^https://example\\.com/menu\\?own=1&utm_source=print&table=12&svc_cid=${CID}#top$`));
    // No query: the destination as it was, with svc_cid.
    const bare = await scan(ingress.url, link.shortId);
    expect(bare.location).toMatch(new RegExp(`^https://example\\.com/menu\\?own=1&svc_cid=${CID}#top$`));
  });

  it('keeps the forwarded query exactly, drops a visitor\'s own svc_cid and escapes what a Location cannot carry', async () => {
    const link = await createLink({ destination: 'https://example.com/p' });
    const res = await scan(ingress.url, `${link.shortId}?q=a%20b&svc_cid=forged&x=%C3%A9&flag`);
    expect(res.location).toMatch(new RegExp(`^https://example\\.com/p\\?q=a%20b&x=%C3%A9&flag&svc_cid=${CID}$`));
    expect(res.location).not.toContain('forged');
  });

  it('is off with forwardQuery: false, and the scan still records the short URL\'s utm_* parameters', async () => {
    const link = await createLink({ destination: 'https://example.com/off?own=1', forwardQuery: false });
    expect(link.forwardQuery).toBe(false);
    const res = await scan(ingress.url, `${link.shortId}?utm_source=flyer`);
    expect(res.location).toMatch(new RegExp(`^https://example\\.com/off\\?own=1&svc_cid=${CID}$`));
    const messages = await readTopic<ScanEvent>(ingress.platform.config, 'scans', (m) => m.some((x) => x.value.linkId === link.id));
    expect(messages.find((m) => m.value.linkId === link.id)!.value).toMatchObject({ utmSource: 'flyer', destination: 'https://example.com/off?own=1' });
  });

  it('clickId: false sends no svc_cid (a pre-signed URL stays valid), the query still forwarded; HEAD forwards too', async () => {
    const presigned = 'https://bucket.s3.amazonaws.com/file.pdf?X-Amz-Signature=abc&X-Amz-Expires=600';
    const link = await createLink({ destination: presigned, clickId: false, forwardQuery: false });
    expect(link).toMatchObject({ clickId: false, forwardQuery: false });
    const res = await scan(ingress.url, `${link.shortId}?utm_source=x`);
    expect(res.status).toBe(302);
    expect(res.location).toBe(presigned);

    const both = await createLink({ destination: 'https://example.com/b', clickId: false });
    expect((await scan(ingress.url, `${both.shortId}?a=1`)).location).toBe('https://example.com/b?a=1');
    const head = await fetch(`${ingress.url}/${both.shortId}?a=1`, { method: 'HEAD', redirect: 'manual', headers: { 'x-forwarded-for': freshIp() } });
    expect(head.headers.get('location')).toBe('https://example.com/b?a=1');
  });

  it('is changed by PATCH and bulk, and shown by GET and the list', async () => {
    const link = await createLink({ destination: 'https://example.com/c' });
    const patched = await api.patch(`/api/v1/links/${link.id}`, { forwardQuery: false, clickId: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ forwardQuery: false, clickId: false });
    await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.clickId === false, 5000, 20);
    expect((await scan(ingress.url, `${link.shortId}?a=1`)).location).toBe('https://example.com/c');
    expect((await api.get(`/api/v1/links/${link.id}`)).body).toMatchObject({ forwardQuery: false, clickId: false });
    const listed = await api.get(`/api/v1/links?shortId=${link.shortId}`);
    expect(listed.body.data[0]).toMatchObject({ forwardQuery: false, clickId: false });

    const bulk = await api.post('/api/v1/links/bulk', {
      operations: [
        { action: 'create', link: { destination: 'https://example.com/d', forwardQuery: false } },
        { action: 'update', id: link.id, changes: { forwardQuery: true } },
        { action: 'create', link: { destination: 'https://example.com/e', clickId: 'no' } },
      ],
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.results[0]).toMatchObject({ status: 201, link: { forwardQuery: false, clickId: true } });
    expect(bulk.body.results[1]).toMatchObject({ status: 200, link: { forwardQuery: true, clickId: false } });
    expect(bulk.body.results[2]).toMatchObject({ status: 400, error: { code: 'validation_failed' } });
    await eventually(async () => ingress.app.redirects.cache.get(link.shortId)?.forwardQuery === true, 5000, 20);
    expect((await scan(ingress.url, `${link.shortId}?a=1`)).location).toBe('https://example.com/c?a=1');
  });

  it('refuses values that are not booleans with 400 validation_failed, changing nothing', async () => {
    for (const body of [{ forwardQuery: 'yes' }, { forwardQuery: null }, { clickId: 0 }, { clickId: null }]) {
      const res = await api.post('/api/v1/links', { destination: 'https://example.com/', ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('is offered by the MCP create_link tool', async () => {
    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${ingress.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': freshIp() } } }));
    try {
      const result = await mcp.callTool({ name: 'create_link', arguments: { destination: 'https://example.com/mcp', forwardQuery: false, clickId: false } });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const link = (result.structuredContent as { link: { shortId: string; forwardQuery: boolean; clickId: boolean } }).link;
      expect(link).toMatchObject({ forwardQuery: false, clickId: false });
      expect((await scan(ingress.url, `${link.shortId}?a=1`)).location).toBe('https://example.com/mcp');
    } finally {
      await mcp.close();
    }
  });
});
