// The MCP endpoint against the real stack, through the SDK's own client
// (StreamableHTTPClientTransport with the Authorization header): initialize,
// tools/list, and every tool, each answer compared with the REST API's answer
// for the same data. Scans come from real redirects through the ingress and
// the scan-sink worker, conversions from click IDs of those redirects through
// the conversions topic and its sink. Also: authentication, the rate limit
// shared with REST, JSON-RPC and tool errors, the 405/406 refusals and the
// discovery document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { ADMIN_TOKEN, call, client, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { hostSinks, scan, scansStored } from '../../support/links/scans.ts';

const TOOLS = ['list_links', 'create_link', 'list_campaigns', 'create_campaign', 'get_analytics', 'get_report', 'get_referrers', 'get_funnel', 'track_conversion'];
const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

let ingress: TestIngress;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  stopWorkers = await hostSinks(ingress.platform, { conversions: true });
}, 60_000);

afterAll(async () => {
  await stopWorkers?.();
  await ingress?.close();
});

interface Mcp {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Every HTTP response the client received, in order. */
  responses: Response[];
  /** The last response that went through authentication (it carries the rate-limit headers). */
  lastCounted: () => Response;
}

/** An SDK client connected to the endpoint with this key (and a client IP of its own, as failed keys are limited per IP). */
async function connect(baseUrl: string, key: string | undefined, ip = freshIp()): Promise<Mcp> {
  const responses: Response[] = [];
  const headers: Record<string, string> = { 'x-forwarded-for': ip };
  if (key) headers.authorization = `Bearer ${key}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`), {
    requestInit: { headers },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      responses.push(res);
      return res;
    },
  });
  const mcpClient = new Client({ name: 'linkmail-integration-test', version: '1.0.0' });
  await mcpClient.connect(transport);
  return { client: mcpClient, transport, responses, lastCounted: () => responses.filter((r) => r.headers.has('x-ratelimit-limit')).at(-1)! };
}

/** Calls a tool that must succeed; its structured result. */
async function tool(mcp: Mcp, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const res = await mcp.client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  const content = res.content as { type: string; text: string }[];
  expect(content[0]?.type).toBe('text');
  expect(content[0]!.text.length).toBeGreaterThan(0);
  // The structured result is also there as JSON text, for clients that read only `content`.
  expect(JSON.parse(content[1]!.text)).toEqual(res.structuredContent);
  return res.structuredContent;
}

/** Calls a tool that must fail; the error of its REST-shaped body. */
async function toolError(mcp: Mcp, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; requestId: string; details?: { path: string; message: string }[] }> {
  const res = await mcp.client.callTool({ name, arguments: args });
  expect(res.isError, JSON.stringify(res)).toBe(true);
  expect(res.structuredContent).toBeUndefined();
  return JSON.parse((res.content as { text: string }[])[0]!.text).error;
}

/** A raw POST of a JSON-RPC body (text or value) to the endpoint. */
const post = (baseUrl: string, key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  call(baseUrl, 'POST', '/api/mcp', { key, raw: typeof body === 'string' ? body : JSON.stringify(body), headers: { accept: 'application/json, text/event-stream', ...headers } });

describe('the SDK client', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await connect(ingress.url, (await workspaceWithKey(ingress.url)).key);
  });
  afterAll(() => mcp?.client.close());

  it('initializes with protocol 2025-06-18, statelessly, and tolerates the refused event stream', async () => {
    expect(mcp.transport.protocolVersion).toBe('2025-06-18');
    expect(mcp.transport.sessionId).toBeUndefined();
    expect(mcp.client.getServerVersion()).toMatchObject({ name: 'linkmail-links', version: '1.0.0' });
    expect(mcp.client.getServerCapabilities()?.tools).toBeTruthy();
    expect(mcp.client.getInstructions()).toContain('daysBack');
    const init = mcp.responses[0]!;
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toContain('application/json');
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.headers.get('x-ratelimit-limit')).toBe('100000');
    // After initialized, the SDK client tries GET for an event stream; it gets 405 and carries on.
    await eventually(async () => mcp.responses.some((r) => r.status === 405), 5000, 20);
    expect(await mcp.client.ping()).toEqual({});
  });

  it('lists the nine tools, each with strict argument and result schemas and a description', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, t.name).toBe(false);
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
    }
    const create = tools.find((t) => t.name === 'create_link')!;
    expect(create.inputSchema.required).toEqual(['destination']);
    expect(Object.keys(create.inputSchema.properties!)).toEqual(expect.arrayContaining(['shortId', 'iosUrl', 'androidUrl', 'tags', 'campaignId']));
    expect(tools.find((t) => t.name === 'get_analytics')!.inputSchema.properties!.daysBack).toMatchObject({ type: 'integer', minimum: 1, maximum: 400, default: 30 });
  });

  it('answers initialize with 2025-06-18 whatever version the client asks for', async () => {
    const key = (await workspaceWithKey(ingress.url)).key;
    const res = await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '0' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'linkmail-links' } } });
  });
});

describe('link and campaign tools', () => {
  let mcp: Mcp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    const ws = await workspaceWithKey(ingress.url);
    api = client(ingress.url, ws.key);
    mcp = await connect(ingress.url, ws.key);
  });
  afterAll(() => mcp?.client.close());

  it('create_campaign and list_campaigns answer what REST answers', async () => {
    const { campaign } = await tool(mcp, 'create_campaign', { name: 'Spring print', description: 'Flyers' });
    expect(campaign).toMatchObject({ name: 'Spring print', description: 'Flyers', linkCount: 0, activeLinkCount: 0 });
    expect((await api.get(`/api/v1/campaigns/${campaign.id}`)).body).toEqual(campaign);
    await tool(mcp, 'create_campaign', { name: 'Autumn print' });
    const taken = await toolError(mcp, 'create_campaign', { name: ' spring PRINT ' });
    expect(taken.code).toBe('campaign_name_taken');
    expect((await api.post('/api/v1/campaigns', { name: ' spring PRINT ' })).body.error.code).toBe(taken.code);

    const listed = await tool(mcp, 'list_campaigns', {});
    const rest = (await api.get('/api/v1/campaigns')).body;
    expect(listed.campaigns).toEqual(rest.data);
    expect(listed.campaigns.map((c: { name: string }) => c.name)).toEqual(['Autumn print', 'Spring print']);
    const page1 = await tool(mcp, 'list_campaigns', { limit: 1 });
    expect(page1.nextCursor).toBe((await api.get('/api/v1/campaigns?limit=1')).body.nextCursor);
    const page2 = await tool(mcp, 'list_campaigns', { limit: 1, cursor: page1.nextCursor });
    expect(page2).toEqual({ campaigns: [rest.data[1]], nextCursor: null });
  });

  it('create_link makes a link that REST returns and the redirect follows, routing iOS visitors', async () => {
    const { campaign } = await tool(mcp, 'create_campaign', { name: 'Menus' });
    const res = await mcp.client.callTool({
      name: 'create_link',
      arguments: { destination: 'https://example.com/menu?x=1', shortId: 'mcp-menu', iosUrl: 'https://apps.apple.com/app/id1', androidUrl: 'https://play.google.com/store/apps/details?id=x', tags: [' Menu ', 'print'], campaignId: campaign.id },
    });
    expect(res.isError).toBeFalsy();
    const link = (res.structuredContent as any).link;
    expect((res.content as { text: string }[])[0]!.text).toContain(link.shortUrl);
    expect(link).toMatchObject({ shortId: 'mcp-menu', destination: 'https://example.com/menu?x=1', tags: ['menu', 'print'], campaignId: campaign.id, isActive: true });
    expect(link.shortUrl).toMatch(/\/mcp-menu$/);
    expect((await api.get(`/api/v1/links/${link.id}`)).body).toEqual(link);
    // Published to links.changelog like a REST-created link: the redirect knows it within moments.
    await eventually(async () => ingress.app.redirects.cache.get('mcp-menu') !== undefined, 5000, 20);
    expect((await scan(ingress.url, 'mcp-menu')).location).toMatch(/^https:\/\/example\.com\/menu\?x=1&svc_cid=/);
    expect((await scan(ingress.url, 'mcp-menu', { 'user-agent': IPHONE_UA })).location).toMatch(/^https:\/\/apps\.apple\.com\/app\/id1\?svc_cid=/);
  });

  it('create_link refuses what REST refuses, with the same codes, and changes nothing', async () => {
    const before = (await api.get('/api/v1/links?limit=100')).body.data.length;
    const own = `${ingress.platform.config.PUBLIC_BASE_URL}/loop`;
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ destination: 'ftp://example.com/file' }, 'invalid_url', '/destination'],
      [{ destination: own }, 'invalid_url', '/destination'],
      [{ destination: 'https://user:pw@example.com/' }, 'invalid_url', '/destination'],
      [{ destination: 'https://example.com/', iosUrl: 'javascript:alert(1)' }, 'invalid_url', '/iosUrl'],
      [{ destination: 'https://example.com/a b' }, 'validation_failed', '/destination'],
      [{ destination: 'https://example.com/', shortId: 'api' }, 'short_id_reserved', '/shortId'],
      [{ destination: 'https://example.com/', shortId: 'mcp-menu' }, 'short_id_taken', '/shortId'],
      [{ destination: 'https://example.com/', shortId: 'a!' }, 'validation_failed', '/shortId'],
      [{ destination: 'https://example.com/', campaignId: '00000000-0000-4000-8000-000000000000' }, 'campaign_not_found', '/campaignId'],
      [{ destination: 'https://example.com/', expiresAt: '2020-01-01T00:00:00Z' }, 'expiry_in_past', '/expiresAt'],
      [{ destination: 'https://example.com/', expiresAt: 'tomorrow' }, 'validation_failed', '/expiresAt'],
      [{ destination: 'https://example.com/', tags: ['ok', 'bad\u0000'] }, 'validation_failed', '/tags/1'],
      [{ destination: 'https://example.com/', scanLimit: 0 }, 'validation_failed', '/scanLimit'],
      [{ destination: 'https://example.com/', pixels: [] }, 'unknown_field', '/pixels'],
    ];
    for (const [args, code, path] of cases) {
      const error = await toolError(mcp, 'create_link', args);
      expect(error.code, JSON.stringify(args)).toBe(code);
      if (path) expect(error.details?.map((d) => d.path), JSON.stringify(args)).toContain(path);
      expect(error.requestId).toBeTruthy();
      if (code !== 'unknown_field') expect((await api.post('/api/v1/links', args)).body.error.code, JSON.stringify(args)).toBe(code);
    }
    expect((await api.get('/api/v1/links?limit=100')).body.data.length).toBe(before);
  });

  it('create_link applies the REST body rules themselves: too many tags is what REST answers, code and details', async () => {
    const args = { destination: 'https://example.com/tags', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) };
    const error = await toolError(mcp, 'create_link', args);
    const rest = (await api.post('/api/v1/links', args)).body.error;
    expect(rest.code).toBe('validation_failed');
    expect(error.code).toBe(rest.code);
    expect(error.details).toEqual(rest.details);
    const { tools } = await mcp.client.listTools();
    expect(tools.find((t) => t.name === 'create_link')!.inputSchema.properties!.tags).toMatchObject({ maxItems: 20 });
  });

  it('list_links pages newest first with search and tag filters, as GET /api/v1/links does', async () => {
    for (const [i, tags] of [['spring'], ['spring', 'poster'], ['autumn'], ['spring']].entries()) {
      await tool(mcp, 'create_link', { destination: `https://example.com/list/${i}`, tags });
    }
    const all = await tool(mcp, 'list_links', {});
    const rest = (await api.get('/api/v1/links')).body;
    expect(all).toEqual({ links: rest.data, nextCursor: rest.nextCursor });
    expect(all.links[0].destination).toBe('https://example.com/list/3');

    const page1 = await tool(mcp, 'list_links', { tags: ['spring'], limit: 2 });
    const restPage1 = (await api.get('/api/v1/links?tag=spring&limit=2')).body;
    expect(page1).toEqual({ links: restPage1.data, nextCursor: restPage1.nextCursor });
    expect(page1.nextCursor).toBeTruthy();
    const page2 = await tool(mcp, 'list_links', { tags: ['spring'], limit: 2, cursor: page1.nextCursor });
    const restPage2 = (await api.get(`/api/v1/links?tag=spring&limit=2&cursor=${encodeURIComponent(restPage1.nextCursor)}`)).body;
    expect(page2).toEqual({ links: restPage2.data, nextCursor: null });
    expect([...page1.links, ...page2.links].map((l: { destination: string }) => l.destination)).toEqual(['https://example.com/list/3', 'https://example.com/list/1', 'https://example.com/list/0']);

    const searched = await tool(mcp, 'list_links', { search: 'LIST/2' });
    expect(searched.links.map((l: { destination: string }) => l.destination)).toEqual(['https://example.com/list/2']);
    expect(searched).toEqual({ links: (await api.get('/api/v1/links?q=LIST/2')).body.data, nextCursor: null });
    expect(await tool(mcp, 'list_links', { tags: ['spring', 'poster'] })).toEqual({ links: (await api.get('/api/v1/links?tag=spring&tag=poster')).body.data, nextCursor: null });

    // A deactivated link is listed unless activeOnly.
    await api.delete(`/api/v1/links/${all.links[0].id}`);
    expect((await tool(mcp, 'list_links', {})).links[0]).toMatchObject({ id: all.links[0].id, isActive: false });
    expect((await tool(mcp, 'list_links', { activeOnly: true })).links).toEqual((await api.get('/api/v1/links?isActive=true')).body.data);
    expect((await toolError(mcp, 'list_links', { cursor: 'nonsense' })).code).toBe('invalid_cursor');
  });
});

describe('analytics and conversion tools', () => {
  let mcp: Mcp;
  let api: ReturnType<typeof client>;
  let workspaceId: string;
  let campaignId: string;
  let menu: { id: string; shortId: string };
  let poster: { id: string; shortId: string };
  const clickIds: string[] = [];
  const scanHours = new Set<number>();

  beforeAll(async () => {
    const ws = await workspaceWithKey(ingress.url);
    workspaceId = ws.workspaceId;
    api = client(ingress.url, ws.key);
    mcp = await connect(ingress.url, ws.key);
    campaignId = (await tool(mcp, 'create_campaign', { name: 'Print' })).campaign.id;
    menu = (await tool(mcp, 'create_link', { destination: 'https://shop.example.com/menu', campaignId })).link;
    poster = (await tool(mcp, 'create_link', { destination: 'https://shop.example.com/poster' })).link;
    await eventually(async () => [menu, poster].every((l) => ingress.app.redirects.cache.get(l.shortId) !== undefined), 5000, 20);
    // 13 scans by people (9 of the menu, 6 of them from a news site; 4 of the poster from social) and 1 by a bot.
    const visits: [string, Record<string, string>][] = [
      ...Array.from({ length: 6 }, (): [string, Record<string, string>] => [menu.shortId, { referer: 'https://news.example.org/story' }]),
      ...Array.from({ length: 3 }, (): [string, Record<string, string>] => [menu.shortId, {}]),
      ...Array.from({ length: 4 }, (): [string, Record<string, string>] => [poster.shortId, { referer: 'https://social.example/p/1' }]),
      [poster.shortId, { 'user-agent': BOT_UA }],
    ];
    for (const [shortId, headers] of visits) {
      scanHours.add(Math.floor(Date.now() / 3_600_000));
      const res = await scan(ingress.url, shortId, headers);
      expect(res.status).toBe(302);
      if (shortId === menu.shortId) clickIds.push(res.clickId!);
      scanHours.add(Math.floor(Date.now() / 3_600_000));
    }
    await eventually(() => scansStored(ingress.platform.clickhouse, workspaceId, visits.length), 60_000, 200);
  }, 120_000);
  afterAll(() => mcp?.client.close());

  const restAnalytics = (window: { from: string; to: string }, query = '') => api.get(`/api/v1/analytics?from=${window.from}&to=${window.to}${query}`).then((r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  });

  it('get_analytics matches GET /api/v1/analytics for the same window, whole workspace and one link', async () => {
    const all = await tool(mcp, 'get_analytics', { daysBack: 1 });
    expect(all.window).toMatchObject({ daysBack: 1, interval: 'hour' });
    expect(Date.parse(all.window.to) - Date.parse(all.window.from)).toBe(86_400_000);
    const rest = await restAnalytics(all.window, '&top=5');
    expect(rest.interval).toBe('hour');
    expect(all.scans).toEqual({ total: 13, uniqueVisitors: rest.uniqueVisitors });
    expect(rest.totalScans).toBe(13);
    expect(all.series.map((p: any) => ({ start: p.start, scans: p.scans, uniqueVisitors: p.uniqueVisitors }))).toEqual(rest.timeseries);
    expect(all.topLinks).toEqual(rest.topLinks);
    expect(all.topLinks).toEqual([{ shortId: menu.shortId, linkId: menu.id, scans: 9 }, { shortId: poster.shortId, linkId: poster.id, scans: 4 }]);
    expect(all.countries).toEqual(rest.countries);
    expect(all.devices).toEqual(rest.devices);
    expect(all.referrers).toEqual(rest.referrers);
    expect(all.scope).toEqual({ linkId: null, campaignId: null, domain: null });

    const withBots = await tool(mcp, 'get_analytics', { daysBack: 30, includeBots: true });
    expect(withBots.window.interval).toBe('day');
    expect(withBots.scans.total).toBe((await restAnalytics(withBots.window, '&includeBots=true')).totalScans);
    expect(withBots.scans.total).toBe(14);

    const one = await tool(mcp, 'get_analytics', { daysBack: 7, linkId: menu.id });
    const restOne = await restAnalytics(one.window, `&linkId=${menu.id}&top=5`);
    expect(one.scans.total).toBe(9);
    expect(one.scans).toEqual({ total: restOne.totalScans, uniqueVisitors: restOne.uniqueVisitors });
    expect(one.referrers).toEqual(restOne.referrers);
    const inCampaign = await tool(mcp, 'get_analytics', { campaignId });
    expect(inCampaign.scans.total).toBe((await restAnalytics(inCampaign.window, `&campaignId=${campaignId}`)).totalScans);
    expect(inCampaign.scans.total).toBe(9);
  });

  it('get_referrers matches the referrers of GET /api/v1/analytics, for the workspace and one link', async () => {
    const all = await tool(mcp, 'get_referrers', { daysBack: 2 });
    expect(all.referrers).toEqual((await restAnalytics(all.window)).referrers.map((r: any) => ({ referrer: r.referrer, scans: r.count, share: Math.round((r.count / 13) * 10_000) / 10_000 })));
    expect(all.referrers.map((r: any) => [r.referrer, r.scans])).toEqual([['news.example.org', 6], ['social.example', 4], ['(direct)', 3]]);
    expect(all.totalScans).toBe(13);
    const one = await tool(mcp, 'get_referrers', { linkId: poster.id, top: 1 });
    expect(one).toMatchObject({ linkId: poster.id, totalScans: 4, referrers: [{ referrer: 'social.example', scans: 4, share: 1 }] });
  });

  it('get_report ranks links and campaigns by scans and lays the scans out by weekday and hour', async () => {
    const report = await tool(mcp, 'get_report', { daysBack: 7 });
    const rest = await restAnalytics(report.window, '&top=100');
    expect(report.totalScans).toBe(rest.totalScans);
    expect(report.topLinks.map((l: any) => ({ shortId: l.shortId, linkId: l.linkId, scans: l.scans }))).toEqual(rest.topLinks);
    expect(report.topLinks[0]).toEqual({ linkId: menu.id, shortId: menu.shortId, destination: 'https://shop.example.com/menu', campaignId, scans: 9, share: 0.6923 });
    expect(report.topCampaigns).toEqual([{ campaignId, name: 'Print', scans: (await restAnalytics(report.window, `&campaignId=${campaignId}`)).totalScans, share: 0.6923, scannedLinks: 1 }]);
    expect(report.scansOutsideCampaigns).toBe(4);
    expect(report.heatmap.days.map((d: any) => d.weekday)).toEqual(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']);
    let sum = 0;
    for (const [i, day] of report.heatmap.days.entries()) {
      expect(day.byHour).toHaveLength(24);
      expect(day.total).toBe(day.byHour.reduce((a: number, b: number) => a + b, 0));
      sum += day.total;
      for (const [hour, n] of day.byHour.entries()) {
        if (n === 0) continue;
        // Only hours in which this test scanned have scans.
        const matching = [...scanHours].some((h) => new Date(h * 3_600_000).getUTCHours() === hour && (new Date(h * 3_600_000).getUTCDay() + 6) % 7 === i);
        expect(matching, `${day.weekday} ${hour}:00`).toBe(true);
      }
    }
    expect(sum).toBe(13);
    expect(report.heatmap.peak.scans).toBeGreaterThanOrEqual(7);
    expect((await tool(mcp, 'get_report', { top: 1 })).topLinks).toHaveLength(1);
  });

  it('track_conversion records clicks and conversions as POST /api/v1/track does; get_funnel and get_analytics count them as the REST funnel does', async () => {
    const [a, b, c] = clickIds as [string, string, string];
    const click = await tool(mcp, 'track_conversion', { clickId: a, type: 'click' });
    expect(click.conversion).toMatchObject({ object: 'conversion', type: 'click', event: 'click', linkId: menu.id, campaignId, amount: null, duplicate: false });
    await tool(mcp, 'track_conversion', { clickId: b, type: 'click' });
    const order = await tool(mcp, 'track_conversion', { clickId: a, event: 'purchase', amount: 12.5, currency: 'eur', externalId: 'order-1', metadata: { sku: 'A1', qty: 2 } });
    expect(order.conversion).toMatchObject({ type: 'conversion', event: 'purchase', amount: 12.5, currency: 'EUR', externalId: 'order-1', metadata: { sku: 'A1', qty: '2' }, duplicate: false });
    const repeat = await tool(mcp, 'track_conversion', { clickId: a, event: 'purchase', amount: 12.5, currency: 'EUR', externalId: 'order-1' });
    expect(repeat.conversion).toEqual({ ...order.conversion, duplicate: true });
    // The same order through REST is the same record.
    const restRepeat = await api.post('/api/v1/track', { clickId: a, event: 'purchase', amount: 12.5, currency: 'EUR', externalId: 'order-1' });
    expect(restRepeat.body).toEqual(repeat.conversion);
    await tool(mcp, 'track_conversion', { clickId: c, amount: 5, currency: 'USD' });

    for (const [args, code] of [
      [{ clickId: 'abc' }, 'click_id_malformed'],
      [{ clickId: a, amount: 3 }, 'currency_required'],
      [{ clickId: a, amount: 3, currency: 'XYZ' }, 'unknown_currency'],
      [{ clickId: a, type: 'click', amount: 1, currency: 'EUR' }, 'amount_not_allowed'],
      [{ clickId: a, type: 'visit' }, 'validation_failed'],
      [{ clickId: 'x'.repeat(84) }, 'click_id_unknown'],
    ] as [Record<string, unknown>, string][]) {
      expect((await toolError(mcp, 'track_conversion', args)).code, JSON.stringify(args)).toBe(code);
      expect((await api.post('/api/v1/track', args)).body.error.code, JSON.stringify(args)).toBe(code);
    }

    const funnel = await eventually(async () => {
      const f = await tool(mcp, 'get_funnel', { daysBack: 1 });
      return f.conversions === 2 && f.trackedClicks === 2 ? f : undefined;
    }, 30_000, 250);
    const rest = (await api.get(`/api/v1/analytics/funnel?from=${funnel.window.from}&to=${funnel.window.to}`)).body;
    expect(funnel).toEqual({
      window: funnel.window,
      linkId: null,
      campaignId: null,
      domain: null,
      scans: rest.scans,
      trackedClicks: rest.trackedClicks,
      convertedScans: rest.convertedScans,
      conversions: rest.conversions,
      clickRate: rest.clickRate,
      conversionRate: rest.conversionRate,
      revenue: rest.revenue,
      variants: rest.variants,
    });
    expect(funnel).toMatchObject({ scans: 13, trackedClicks: 2, convertedScans: 2, conversions: 2, revenue: [{ currency: 'EUR', amount: 12.5, conversions: 1 }, { currency: 'USD', amount: 5, conversions: 1 }] });
    const ofPoster = await tool(mcp, 'get_funnel', { linkId: poster.id.toUpperCase() });
    expect(ofPoster).toMatchObject({ linkId: poster.id, scans: 4, trackedClicks: 0, conversions: 0, revenue: [] });
    const ofCampaign = await tool(mcp, 'get_funnel', { campaignId });
    expect(ofCampaign).toMatchObject({ campaignId, scans: 9, conversions: 2 });

    const analytics = await tool(mcp, 'get_analytics', { daysBack: 1 });
    expect(analytics.conversions).toEqual({ trackedClicks: 2, conversions: 2, convertedScans: 2, conversionRate: rest.conversionRate, revenue: rest.revenue });
    expect(analytics.series.reduce((n: number, p: any) => n + p.conversions, 0)).toBe(2);
    expect(analytics.series.reduce((n: number, p: any) => n + p.trackedClicks, 0)).toBe(2);
  });

  it('answers ids that are not the workspace\'s, or not ids, with tool errors', async () => {
    const stranger = await workspaceWithKey(ingress.url);
    const theirs = await connect(ingress.url, stranger.key);
    try {
      for (const name of ['get_analytics', 'get_referrers', 'get_funnel']) {
        expect((await toolError(theirs, name, { linkId: menu.id })).code, name).toBe('not_found');
      }
      expect((await toolError(theirs, 'get_analytics', { campaignId })).code).toBe('not_found');
      expect((await toolError(theirs, 'track_conversion', { clickId: clickIds[0] })).code).toBe('click_id_other_workspace');
    } finally {
      await theirs.client.close();
    }
    expect((await toolError(mcp, 'get_analytics', { linkId: 'menu' })).code).toBe('validation_failed');
    expect((await toolError(mcp, 'get_analytics', { daysBack: 0 })).details).toEqual([{ path: '/daysBack', message: expect.any(String) }]);
    expect((await toolError(mcp, 'get_analytics', { daysBack: 401 })).code).toBe('validation_failed');
    expect((await tool(mcp, 'get_analytics', { daysBack: 400 })).window.interval).toBe('week');
  });
});

describe('errors', () => {
  let key: string;
  let mcp: Mcp;
  beforeAll(async () => {
    key = (await workspaceWithKey(ingress.url)).key;
    mcp = await connect(ingress.url, key);
  });
  afterAll(() => mcp?.client.close());

  it('answers an unknown tool with JSON-RPC -32602, and bad arguments with isError results naming the field', async () => {
    const unknown = await mcp.client.callTool({ name: 'delete_everything', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32602);
    expect((unknown as McpError).message).toContain('Unknown tool: delete_everything');

    const wrongType = await toolError(mcp, 'list_links', { limit: 'ten' });
    expect(wrongType).toMatchObject({ code: 'validation_failed', details: [{ path: '/limit' }] });
    const outOfRange = await toolError(mcp, 'list_links', { limit: 101 });
    expect(outOfRange).toMatchObject({ code: 'validation_failed', details: [{ path: '/limit' }] });
    const unknownArg = await toolError(mcp, 'list_links', { q: 'x' });
    expect(unknownArg).toMatchObject({ code: 'unknown_field', details: [{ path: '/q', message: 'is not an argument of this tool' }] });
    const missing = await toolError(mcp, 'create_link', {});
    expect(missing).toMatchObject({ code: 'validation_failed', details: [{ path: '/destination' }] });
    const nested = await toolError(mcp, 'create_link', { destination: 'https://example.com/', tags: ['a', 7] });
    expect(nested.details).toEqual([{ path: '/tags/1', message: expect.any(String) }]);
  });

  it('answers malformed JSON, non-JSON-RPC bodies, batches, unknown methods and bad params with JSON-RPC errors, never a 5xx', async () => {
    const parse = await post(ingress.url, key, '{"jsonrpc":"2.0",');
    expect(parse.status).toBe(400);
    expect(parse.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringContaining('Parse error') } });
    const empty = await post(ingress.url, key, '');
    expect(empty.body.error.code).toBe(-32700);

    for (const body of ['{"hello":"world"}', 'null', '42', '"ping"', '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":{},"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}']) {
      const res = await post(ingress.url, key, body);
      expect(res.status, body).toBe(400);
      expect(res.body, body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('Invalid Request') } });
    }
    const batch = await post(ingress.url, key, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
    expect(batch.status).toBe(400);
    expect(batch.body.error).toMatchObject({ code: -32600, message: expect.stringContaining('batches') });

    const method = await post(ingress.url, key, { jsonrpc: '2.0', id: 7, method: 'resources/list' });
    expect(method.status).toBe(200);
    expect(method.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
    for (const params of [{}, { name: 5 }, { name: 'list_links', arguments: 'limit=1' }]) {
      const res = await post(ingress.url, key, { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params });
      expect(res.status, JSON.stringify(params)).toBe(200);
      expect(res.body, JSON.stringify(params)).toMatchObject({ jsonrpc: '2.0', id: 'c1', error: { code: -32602, message: expect.stringContaining('Invalid params') } });
    }
    const badInit = await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5 } });
    expect(badInit.body.error.code).toBe(-32602);

    // The tools work without initialize: every request stands alone.
    const call1 = await post(ingress.url, key, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_links', arguments: { limit: 1 } } }, { 'mcp-protocol-version': '2025-06-18' });
    expect(call1.status).toBe(200);
    expect(call1.body).toMatchObject({ jsonrpc: '2.0', id: 3, result: { structuredContent: { links: [], nextCursor: null }, content: [{ type: 'text', text: 'No links match.' }, { type: 'text', text: '{"links":[],"nextCursor":null}' }] } });
    const notification = await post(ingress.url, key, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
    expect(notification.body).toBeUndefined();

    const version = await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '2024-11-05' });
    expect(version.status).toBe(400);
    expect(version.body.error).toMatchObject({ code: -32000, message: expect.stringContaining('2025-06-18') });
    const plain = await call(ingress.url, 'POST', '/api/mcp', { key, raw: '{"jsonrpc":"2.0","id":1,"method":"ping"}', headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(415);
    expect(plain.body.error.code).toBe('unsupported_media_type');
    const huge = await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(1_100_000) } } });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
  });

  it('refuses GET and DELETE (no event stream, no sessions) with 405 and Allow: POST, and a client that takes only event streams with 406', async () => {
    for (const [method, headers] of [['GET', { accept: 'text/event-stream' }], ['GET', {}], ['DELETE', {}]] as const) {
      const res = await call(ingress.url, method, '/api/mcp', { key, headers });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('Method Not Allowed') } });
    }
    expect((await call(ingress.url, 'GET', '/api/mcp', { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    const sseOnly = await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: 'text/event-stream' });
    expect(sseOnly.status).toBe(406);
    expect(sseOnly.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('Not Acceptable') } });
    // A plain JSON client (no event streams at all) is served.
    expect((await post(ingress.url, key, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: 'application/json' })).body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect((await post(ingress.url, key, { jsonrpc: '2.0', id: 2, method: 'ping' }, { accept: '*/*' })).status).toBe(200);
  });
});

describe('authentication', () => {
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

  it('answers a missing or bad key with the REST 401 body, and the SDK client fails to connect', async () => {
    const missing = await post(ingress.url, undefined, ping);
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('missing_api_key');
    expect(missing.headers.get('x-ratelimit-limit')).toBe('10');
    const bad = await post(ingress.url, `lk_live_${'x'.repeat(32)}`, ping);
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('invalid_api_key');
    const basic = await call(ingress.url, 'POST', '/api/mcp', { raw: JSON.stringify(ping), headers: { authorization: 'Basic abc', accept: 'application/json' } });
    expect(basic.body.error.code).toBe('invalid_api_key');
    // Bad JSON with a bad key is still a 401: authentication comes first.
    expect((await post(ingress.url, undefined, '{oops')).status).toBe(401);

    for (const key of [undefined, `lk_live_${'y'.repeat(32)}`]) {
      const failed = await connect(ingress.url, key).catch((e: unknown) => e as { code?: number; message: string });
      expect(failed).toBeInstanceOf(Error);
      expect((failed as { code?: number }).code).toBe(401);
      expect((failed as Error).message).toContain(key ? 'invalid_api_key' : 'missing_api_key');
    }
  });

  it('refuses keys of Free and Pro workspaces with 403 plan_upgrade_required', async () => {
    for (const plan of ['free', 'pro'] as const) {
      const ws = await workspaceWithKey(ingress.url, plan);
      const res = await post(ingress.url, ws.key, ping);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('plan_upgrade_required');
      const failed = await connect(ingress.url, ws.key).then(() => undefined, (e: unknown) => e as { code?: number });
      expect(failed?.code).toBe(403);
    }
  });

  it('lets a revoked key in no more', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const mcp = await connect(ingress.url, ws.key);
    await tool(mcp, 'list_links');
    await call(ingress.url, 'DELETE', `/admin/v1/workspaces/${ws.workspaceId}/keys/${ws.keyId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const refused = await mcp.client.callTool({ name: 'list_links', arguments: {} }).catch((e: unknown) => e as { code?: number });
    expect(refused.code).toBe(401);
    await mcp.client.close();
  });
});

describe('the rate limit shared with REST', () => {
  let limited: TestIngress;
  beforeAll(async () => {
    limited = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100' });
  }, 60_000);
  afterAll(async () => {
    await limited?.close();
  });

  it('counts REST and MCP requests together and refuses the 101st in the minute on either', async () => {
    const ws = await workspaceWithKey(limited.url);
    const other = await workspaceWithKey(limited.url);
    const rest = client(limited.url, ws.key);
    const mcp = await connect(limited.url, ws.key);
    // initialize and notifications/initialized counted; the refused GET for an event stream is not.
    const counted = mcp.responses.filter((r) => r.headers.has('x-ratelimit-limit'));
    expect(counted.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['99', '98']);
    for (let used = 2; used < 100; used++) {
      if (used % 2 === 0) {
        const res = await rest.get('/api/v1/links?limit=1');
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(99 - used));
      } else {
        await tool(mcp, used % 3 === 0 ? 'list_campaigns' : 'list_links', { limit: 1 });
        expect(mcp.lastCounted().headers.get('x-ratelimit-remaining')).toBe(String(99 - used));
        expect(mcp.lastCounted().headers.get('x-ratelimit-limit')).toBe('100');
      }
    }
    // The 101st: refused over MCP (the SDK client sees the HTTP 429) and over REST.
    const refused = await mcp.client.callTool({ name: 'list_links', arguments: {} }).catch((e: unknown) => e as { code?: number; message: string });
    expect(refused.code).toBe(429);
    expect(refused.message).toContain('rate_limited');
    const last = mcp.lastCounted();
    expect(last.status).toBe(429);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    const raw = await post(limited.url, ws.key, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(raw.status).toBe(429);
    expect(raw.body.error.code).toBe('rate_limited');
    const viaRest = await rest.get('/api/v1/links');
    expect(viaRest.status).toBe(429);
    expect(viaRest.body.error.code).toBe('rate_limited');
    // Another workspace has its own allowance, over MCP too.
    expect((await post(limited.url, other.key, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    await mcp.client.close();
  });
});

describe('GET /.well-known/mcp.json', () => {
  it('is public and names the endpoint, protocol version, auth scheme, and the link product\'s limit and every tool its server lists', async () => {
    const res = await fetch(`${ingress.url}/.well-known/mcp.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as any;
    expect(doc).toMatchObject({
      protocolVersion: '2025-06-18',
      endpoint: `${ingress.platform.config.PUBLIC_BASE_URL}/api/mcp`,
      transport: { type: 'streamable-http', stateless: true, serverSentEvents: false },
      authentication: { type: 'bearer', header: 'Authorization' },
    });
    const links = doc.products.find((p: { product: string }) => p.product === 'links');
    expect(links).toMatchObject({ name: 'linkmail-links', version: '1.0.0', rateLimit: { requests: 100000, windowSeconds: 60, scope: 'workspace' } });
    const mcp = await connect(ingress.url, (await workspaceWithKey(ingress.url)).key);
    const { tools } = await mcp.client.listTools();
    await mcp.client.close();
    expect(links.tools).toEqual(tools.map((t) => ({ name: t.name, title: t.title, description: t.description })));
    expect(links.tools.map((t: { name: string }) => t.name)).toEqual(TOOLS);
  });
});
