// A key of workspace B can never read, change or count anything of workspace A:
// every endpoint answers as if A's resources did not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let a: ReturnType<typeof client>;
let b: ReturnType<typeof client>;
let linkA: any;
let campaignA: any;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  a = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  b = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
  campaignA = (await a.post('/api/v1/campaigns', { name: 'A only' })).body;
  linkA = (await a.post('/api/v1/links', { destination: 'https://a.example.com/', shortId: `iso-${Date.now()}`, tags: ['secret-a'], campaignId: campaignA.id })).body;
});
afterAll(async () => {
  await ingress?.close();
});

describe("workspace B against workspace A's resources", () => {
  it('links: get, update, delete answer 404', async () => {
    for (const res of [
      await b.get(`/api/v1/links/${linkA.id}`),
      await b.patch(`/api/v1/links/${linkA.id}`, { destination: 'https://b.example.com/' }),
      await b.delete(`/api/v1/links/${linkA.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it("lists, searches and filters show B's own data and nothing of A", async () => {
    // B has a link that matches the same searches, so an empty answer cannot pass by accident.
    const { body: own } = await b.post('/api/v1/links', { destination: 'https://a.example.com/b-own', tags: ['secret-a'] });
    const { body: ownCampaign } = await b.post('/api/v1/campaigns', { name: 'B only' });
    for (const query of ['', '?q=a.example.com', '?tag=secret-a']) {
      const res = await b.get(`/api/v1/links${query}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((l: any) => l.id)).toEqual([own.id]);
    }
    expect((await b.get(`/api/v1/links?q=${linkA.shortId}`)).body.data).toHaveLength(0);
    expect((await b.get(`/api/v1/links?shortId=${linkA.shortId}`)).body.data).toHaveLength(0);
    expect((await b.get(`/api/v1/links?campaignId=${campaignA.id}`)).body.data).toHaveLength(0);
    expect((await b.get('/api/v1/campaigns')).body.data.map((c: any) => c.id)).toEqual([ownCampaign.id]);
  });

  it('bulk update and delete of A ids fail per item with 404', async () => {
    const res = await b.post('/api/v1/links/bulk', {
      operations: [
        { action: 'update', id: linkA.id, changes: { destination: 'https://b.example.com/' } },
        { action: 'delete', id: linkA.id },
      ],
    });
    expect(res.body.results.map((r: any) => r.status)).toEqual([404, 404]);
  });

  it("campaigns: get and rename answer 404, and A's campaign cannot hold B's links", async () => {
    expect((await b.get(`/api/v1/campaigns/${campaignA.id}`)).status).toBe(404);
    expect((await b.patch(`/api/v1/campaigns/${campaignA.id}`, { name: 'taken over' })).status).toBe(404);
    const intoA = await b.post('/api/v1/links', { destination: 'https://b.example.com/', campaignId: campaignA.id });
    expect(intoA.status).toBe(400);
    expect(intoA.body.error.code).toBe('campaign_not_found');
    const { body: linkB } = await b.post('/api/v1/links', { destination: 'https://b.example.com/' });
    expect((await b.patch(`/api/v1/links/${linkB.id}`, { campaignId: campaignA.id })).body.error.code).toBe('campaign_not_found');
  });

  it("analytics, export and funnel refuse A's link and campaign ids with 404 not_found (not 200 with zero scans)", async () => {
    for (const path of [
      `/api/v1/analytics?linkId=${linkA.id}`,
      `/api/v1/analytics?campaignId=${campaignA.id}`,
      `/api/v1/analytics?linkId=${linkA.id.toUpperCase()}`,
      `/api/v1/analytics/export?linkId=${linkA.id}`,
      `/api/v1/analytics/funnel?linkId=${linkA.id}`,
      `/api/v1/analytics/funnel?campaignId=${campaignA.id}`,
      `/api/v1/links/${linkA.id}/analytics`,
    ]) {
      const res = await b.get(path);
      expect([res.status, res.body.error?.code], path).toEqual([404, 'not_found']);
    }
    // A itself still gets its analytics.
    expect((await a.get(`/api/v1/analytics?linkId=${linkA.id}`)).status).toBe(200);
    expect((await a.get(`/api/v1/analytics?campaignId=${campaignA.id}`)).status).toBe(200);
  });

  it("B's custom short ID cannot take A's, and A's data is unchanged", async () => {
    const clash = await b.post('/api/v1/links', { destination: 'https://b.example.com/', shortId: linkA.shortId });
    expect(clash.status).toBe(409);
    expect((await a.get(`/api/v1/links/${linkA.id}`)).body).toEqual(linkA);
    expect((await a.get(`/api/v1/campaigns/${campaignA.id}`)).body).toMatchObject({ name: 'A only', linkCount: 1 });
  });
});
