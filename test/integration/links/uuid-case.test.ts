// Ids in upper case mean the same records: every UUID a client sends (path,
// query or body) is lower-cased at the edge, so Postgres (which compares
// uuids) and ClickHouse (which compares the text) see the same id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostWorkers } from '../../../src/platform/actors/host.ts';
import { ADMIN_TOKEN, call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { linkScansStored, scan, scanSink } from '../../support/links/scans.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;
let workspaceId: string;
let keyId: string;
let stopSink: () => Promise<void>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  const ws = await workspaceWithKey(ingress.url);
  ({ workspaceId, keyId } = ws);
  api = client(ingress.url, ws.key);
  const [runtime] = await hostWorkers(ingress.platform, [scanSink(ingress.platform)]);
  stopSink = () => runtime!.stop();
});
afterAll(async () => {
  await stopSink?.();
  await ingress?.close();
});

const up = (id: string) => id.toUpperCase();

describe('upper-case UUIDs', () => {
  it('find the same links, campaigns, webhooks and scans everywhere', async () => {
    const { body: campaign } = await api.post('/api/v1/campaigns', { name: 'Upper' });
    const { body: link } = await api.post('/api/v1/links', { destination: 'https://example.com/upper', campaignId: up(campaign.id) });
    expect(link.campaignId).toBe(campaign.id);
    await eventually(async () => !!ingress.app.redirects.cache.get(link.shortId), 5000, 20);
    for (let i = 0; i < 3; i++) expect((await scan(ingress.url, link.shortId)).status).toBe(302);
    // The rollups too: an insert makes its scans visible in the table before its views' rows.
    await eventually(() => linkScansStored(ingress.platform.clickhouse, link.id, 3), 30_000, 200);

    // Analytics, export and funnel: the scans of the link, whatever the case of its id.
    const L = up(link.id);
    const C = up(campaign.id);
    expect((await api.get(`/api/v1/links/${L}/analytics`)).body.totalScans).toBe(3);
    expect((await api.get(`/api/v1/analytics?linkId=${L}`)).body.totalScans).toBe(3);
    expect((await api.get(`/api/v1/analytics?campaignId=${C}`)).body.totalScans).toBe(3);
    expect((await api.get(`/api/v1/analytics/export?format=json&linkId=${L}`)).body).toHaveLength(3);
    const funnel = (await api.get(`/api/v1/analytics/funnel?linkId=${L}`)).body;
    expect(funnel).toMatchObject({ scans: 3, linkId: link.id });
    expect((await api.get(`/api/v1/analytics/funnel?campaignId=${C}`)).body).toMatchObject({ scans: 3, campaignId: campaign.id });

    // Links and campaigns: found, changed and listed by the upper-case id; answers carry the lower-case one.
    expect((await api.get(`/api/v1/links/${L}`)).body.id).toBe(link.id);
    expect((await api.patch(`/api/v1/links/${L}`, { tags: ['upper'], campaignId: C })).body).toMatchObject({ id: link.id, campaignId: campaign.id });
    expect((await api.get(`/api/v1/links?campaignId=${C}`)).body.data.map((l: { id: string }) => l.id)).toEqual([link.id]);
    const bulk = await api.post('/api/v1/links/bulk', { operations: [{ action: 'update', id: L, changes: { campaignId: C } }] });
    expect(bulk.body.results[0].link).toMatchObject({ id: link.id, campaignId: campaign.id });
    expect((await api.get(`/api/v1/campaigns/${C}`)).body.id).toBe(campaign.id);
    expect((await api.patch(`/api/v1/campaigns/${C}`, { description: 'upper' })).body.id).toBe(campaign.id);

    // Webhook endpoints and their deliveries.
    const { body: endpoint } = await api.post('/api/v1/webhooks', { url: 'https://127.0.0.1:9/upper' });
    const E = up(endpoint.id);
    expect((await api.get(`/api/v1/webhooks/${E}`)).body.id).toBe(endpoint.id);
    expect((await api.get(`/api/v1/webhooks/${E}/deliveries`)).status).toBe(200);
    expect((await api.get(`/api/v1/webhooks/${E}/deliveries/${up('00000000-0000-4000-8000-000000000000')}`)).status).toBe(404);
    expect((await api.delete(`/api/v1/webhooks/${E}`)).status).toBe(204);

    // Operators: workspaces and keys.
    const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    expect((await call(ingress.url, 'GET', `/admin/v1/workspaces/${up(workspaceId)}/keys`, admin)).body.data[0].workspaceId).toBe(workspaceId);
    expect((await call(ingress.url, 'DELETE', `/admin/v1/workspaces/${up(workspaceId)}/keys/${up(keyId)}`, admin)).body.id).toBe(keyId);
  });
});
