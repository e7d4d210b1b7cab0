// Scans by generic HTTP clients (curl, python-requests, Node's fetch…): they
// use up a scan limit like any scan (a limit cannot be bypassed with a
// User-Agent), and they count as scans; only crawlers and link-preview
// fetchers are bots. Analytics, the export, the funnel and the MCP tools
// leave bots out by default and take them in with includeBots, so their
// totals agree either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, type TestIngress } from '../../support/ingress.ts';
import { ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { hostSinks, linkScansStored, scan } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';

let ingress: TestIngress, api: ApiClient, key: string;
let stopWorkers: () => Promise<void>;
beforeAll(async () => {
  ({ ingress, api, key } = await ingressWithWorkspace());
  stopWorkers = await hostSinks(ingress.platform);
}, 60_000);
afterAll(async () => {
  await stopWorkers?.();
  await ingress?.close();
});

const CURL = 'curl/8.5.0';
const HTTP_CLIENTS = [CURL, 'python-requests/2.31.0', 'node', 'axios/1.6.8', 'Go-http-client/1.1', 'okhttp/4.12.0', 'Java/17.0.2', 'PostmanRuntime/7.37.0'];
const CRAWLERS = ['Googlebot/2.1 (+http://www.google.com/bot.html)', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'];

describe('scans by HTTP clients', () => {
  it('use up a scan limit whatever the User-Agent', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/curl-limit', scanLimit: 1 });
    await eventually(async () => !!ingress.app.redirects.cache.get(link.shortId), 5000, 20);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await scan(ingress.url, link.shortId, { 'user-agent': CURL })).status);
    expect(statuses).toEqual([302, 410, 410, 410]);
    // A crawler's redirect is a redirect too: a second link, a crawler first, then nothing.
    const { body: other } = await api.post('/api/v1/links', { destination: 'https://example.com/bot-limit', scanLimit: 1 });
    await eventually(async () => !!ingress.app.redirects.cache.get(other.shortId), 5000, 20);
    expect((await scan(ingress.url, other.shortId, { 'user-agent': CRAWLERS[0]! })).status).toBe(302);
    expect((await scan(ingress.url, other.shortId)).status).toBe(410);
  });

  it('are counted as scans, and analytics, export, funnel and MCP agree with and without bots', async () => {
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/curl-counted' });
    await eventually(async () => !!ingress.app.redirects.cache.get(link.shortId), 5000, 20);
    for (const ua of [...HTTP_CLIENTS, ...CRAWLERS]) expect((await scan(ingress.url, link.shortId, { 'user-agent': ua })).status).toBe(302);
    expect((await scan(ingress.url, link.shortId)).status).toBe(302); // a browser
    const all = HTTP_CLIENTS.length + CRAWLERS.length + 1;
    const people = HTTP_CLIENTS.length + 1;
    // The rollups too: an insert makes its scans visible in the table before its views' rows.
    await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, all), 30_000, 200);

    const mcp = async (name: string, args: Record<string, unknown>) => {
      const res = await call(ingress.url, 'POST', '/api/mcp', {
        key,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      });
      expect(res.body.result?.isError, JSON.stringify(res.body)).toBeFalsy();
      return res.body.result.structuredContent;
    };
    const totals = async (bots: string, mcpBots: { includeBots?: boolean }) => {
      const analytics = await api.get(`/api/v1/links/${link.id}/analytics${bots}`);
      const workspace = await api.get(`/api/v1/analytics?linkId=${link.id}${bots.replace('?', '&')}`);
      const exported = await api.get(`/api/v1/analytics/export?format=json&linkId=${link.id}${bots.replace('?', '&')}`);
      const funnel = await api.get(`/api/v1/analytics/funnel?linkId=${link.id}${bots.replace('?', '&')}`);
      return {
        linkAnalytics: analytics.body.totalScans,
        workspaceAnalytics: workspace.body.totalScans,
        exportRows: exported.body.length,
        funnel: funnel.body.scans,
        mcpAnalytics: (await mcp('get_analytics', { linkId: link.id, ...mcpBots })).scans.total,
        mcpFunnel: (await mcp('get_funnel', { linkId: link.id, ...mcpBots })).scans,
      };
    };
    const same = (n: number) => ({ linkAnalytics: n, workspaceAnalytics: n, exportRows: n, funnel: n, mcpAnalytics: n, mcpFunnel: n });
    expect(await totals('', {})).toEqual(same(people));
    expect(await totals('?includeBots=false', { includeBots: false })).toEqual(same(people));
    expect(await totals('?includeBots=true', { includeBots: true })).toEqual(same(all));
    // The export's isBot column marks exactly the crawlers.
    const rows = (await api.get(`/api/v1/analytics/export?format=json&linkId=${link.id}&includeBots=true`)).body as { isBot: number; userAgent: string }[];
    expect(rows.filter((r) => r.isBot).map((r) => r.userAgent).sort()).toEqual([...CRAWLERS].sort());
  });
});
