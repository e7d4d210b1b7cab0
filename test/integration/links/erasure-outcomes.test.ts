// Erasure outcomes (issue 50) through the real stack: erasures asked for over HTTP and applied by
// the scan sink's own worker process (its privacy runner, every 300 ms here), read back with
// GET /api/v1/privacy/erasures/:id; two workspaces side by side.
// - A visitor's erasure also scrubs the copies of their data: the stored scan.created and
//   conversion.created webhook bodies, and their conversions' external IDs (Postgres, ClickHouse).
// - A click ID whose scan never arrives ends as not_found, not done.
// - A link with scans in 20,000 distinct hours (past ClickHouse's max_ast_elements as a list of
//   hours) is erased, its rollups rebuilt; an erasure that cannot be applied is retried later and
//   then failed, and holds up no other erasure meanwhile.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { insertSettings } from '../../../src/platform/clickhouse/replication.ts';
import { ClickIds } from '../../../src/links/scans/click-id.ts';
import { client } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { linkScansStored, scan, scansStored } from '../../support/links/scans.ts';
import { useWebhookStack } from '../../support/links/webhook-stack.ts';

const stack = useWebhookStack(['links-scan-sink', 'links-conversion-sink', 'links-conversion-events'], {
  SCAN_ERASURE_INTERVAL_MS: '300',
  SCAN_ERASURE_ARRIVAL_MS: '2000',
  SCAN_ERASURE_MAX_ATTEMPTS: '2',
  SCAN_ERASURE_RETRY_BASE_MS: '4000',
});
const { receivers } = stack;

const VISITOR = { 'x-forwarded-for': '2001:db8:50:3::1', 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1' };
const count = async (query: ReturnType<typeof sql>) => Number((await stack.ingress.platform.clickhouse.rows<{ n: string }>(query))[0]!.n);

/** The erasure once it is no longer pending. */
async function finished(api: ReturnType<typeof client>, id: string, timeoutMs = 60_000) {
  let body: any;
  await eventually(async () => {
    const res = await api.get(`/api/v1/privacy/erasures/${id}`);
    expect(res.status).toBe(200);
    body = res.body;
    return body.status !== 'pending';
  }, timeoutMs);
  return body;
}

describe('erasure outcomes', () => {
  it('a visitor\'s erasure is done, read back by GET, and scrubs webhook bodies and external IDs; a scan that never arrives is not_found; another workspace gets 404', async () => {
    const a = await workspaceWithKey(stack.ingress.url);
    const b = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, a.key);
    const other = client(stack.ingress.url, b.key);
    const receiver = await receivers.start(() => 200);
    expect((await api.post('/api/v1/webhooks', { url: receiver.url, events: ['scan.created', 'conversion.created'] })).status).toBe(201);
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/erase' })).body;
    const visit = await scan(stack.ingress.url, link.shortId, VISITOR);
    const sale = await api.post('/api/v1/track', { clickId: visit.clickId, event: 'purchase', amount: 9, currency: 'EUR', externalId: 'order-erase-1' });
    expect(sale.status).toBe(201);
    const pg = stack.ingress.platform.pg;
    await eventually(async () => (await pg.query('SELECT 1 FROM webhook_deliveries WHERE workspace_id = $1', [a.workspaceId])).rowCount === 2, 30_000);
    await eventually(async () => (await count(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${a.workspaceId}`)) === 1, 30_000);
    await eventually(() => scansStored(stack.ingress.platform.clickhouse, a.workspaceId, 1), 30_000);

    const created = await api.post('/api/v1/privacy/erasures', { clickId: visit.clickId });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ object: 'scan_erasure', kind: 'visitor', status: 'pending', finishedAt: null, attempts: 0, scans: null });
    // Another workspace cannot read it; an id that is not one is not found either.
    for (const [res, what] of [[await other.get(`/api/v1/privacy/erasures/${created.body.id}`), 'other workspace'], [await api.get('/api/v1/privacy/erasures/nope'), 'not a uuid'], [await api.get(`/api/v1/privacy/erasures/${randomUUID()}`), 'unknown']] as const) {
      expect([res.status, res.body.error?.code], what).toEqual([404, 'not_found']);
    }

    const done = await finished(api, created.body.id.toUpperCase());
    expect(done).toMatchObject({ id: created.body.id, kind: 'visitor', status: 'done', scans: 1, conversions: 1, webhookDeliveries: 2, attempts: 0, error: null, linkId: null });
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.requestedAt));
    // The stored webhook bodies no longer carry the visitor.
    const { rows: deliveries } = await pg.query<{ event_type: string; body: string }>('SELECT event_type, body FROM webhook_deliveries WHERE workspace_id = $1 ORDER BY event_type', [a.workspaceId]);
    const [conversionBody, scanBody] = deliveries.map((d) => JSON.parse(d.body).data);
    expect(scanBody).toMatchObject({ linkId: link.id, clickId: null, visitorId: null, userAgent: null, country: null, city: null, referrer: null, utm: { source: null } });
    expect(conversionBody).toMatchObject({ conversionId: sale.body.id, scanId: '', clickId: '', externalId: null, amount: 9 });
    for (const d of deliveries) expect(d.body).not.toContain(visit.clickId!);
    // The conversion stays, without its external ID, in Postgres and ClickHouse.
    expect((await pg.query('SELECT external_id, record FROM conversions WHERE workspace_id = $1', [a.workspaceId])).rows).toEqual([
      { external_id: null, record: expect.objectContaining({ scanId: '', clickId: '', externalId: null }) },
    ]);
    expect(await count(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${a.workspaceId} AND external_id = '' AND scan_id = ''`)).toBe(1);

    // A click ID signed for a scan that never reaches the store: not_found once it has been looked for (2 s here).
    const lost = new ClickIds(stack.ingress.platform.config.CLICK_ID_SECRET).sign({ scanId: randomUUID(), linkId: link.id, workspaceId: a.workspaceId });
    const lostErasure = await api.post('/api/v1/privacy/erasures', { clickId: lost });
    expect(lostErasure.status).toBe(202);
    expect(await finished(api, lostErasure.body.id)).toMatchObject({ status: 'not_found', scans: 0, finishedAt: expect.any(String) });
  });

  it('erases a link with scans in 20,000 distinct hours, while an erasure that cannot be applied is retried later, then failed, holding up none', async () => {
    const a = await workspaceWithKey(stack.ingress.url);
    const b = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, a.key);
    const other = client(stack.ingress.url, b.key);
    const ch = stack.ingress.platform.clickhouse;
    const pg = stack.ingress.platform.pg;
    const busy = (await api.post('/api/v1/links', { destination: 'https://example.com/busy' })).body;
    const quiet = (await other.post('/api/v1/links', { destination: 'https://example.com/quiet' })).body;
    expect((await scan(stack.ingress.url, quiet.shortId)).status).toBe(302);
    // Stored before the insert below: on replicas 18.16 takes one quorum insert into a table at a time (286 meanwhile).
    await eventually(() => scansStored(ch, b.workspaceId, 1), 30_000);
    // One scan an hour for 20,000 hours (2.3 years), stored as the sink stores them (the views fill the
    // rollups; on replicas with a quorum, which the erasure's sequentially consistent read needs to see them).
    await ch.exec(sql`INSERT INTO scans_input (scan_id, click_id, workspace_id, link_id, short_id, campaign_id, ts, destination, country, region, city, device, os, browser, referrer, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, is_bot, user_agent, visitor_id)
      SELECT generateUUIDv4(), '', ${a.workspaceId}, ${busy.id}, ${busy.shortId}, '', toDateTime(${Math.floor(Date.now() / 1000) - 3600}) - number * 3600, 'https://example.com/busy',
             'DE', '', '', 'mobile', 'iOS', 'Safari', '', '', '', '', '', '', '', 0, '', concat('v', toString(number % 50))
        FROM numbers(20000)`, { settings: await insertSettings(ch, 'scans') });
    await eventually(() => scansStored(ch, a.workspaceId, 20_000), 60_000);

    // An erasure that cannot be applied (its stored hours lie outside what ClickHouse can hold), asked first.
    const { rows: [broken] } = await pg.query<{ id: string }>(
      "INSERT INTO scan_erasures (workspace_id, kind, link_id, hours, requested_at) VALUES ($1, 'link', $2, ARRAY['1960-01-01T00:00:00Z'::timestamptz], now() - interval '1 minute') RETURNING id",
      [a.workspaceId, busy.id],
    );
    // Pending; the runner may have made its first attempt already (the row is due at once), not its second (4 s later).
    const first = await api.get(`/api/v1/privacy/erasures/${broken!.id}`);
    expect(first.body).toMatchObject({ status: 'pending', finishedAt: null });
    expect(first.body.attempts).toBeLessThanOrEqual(1);
    const busyErasure = await api.delete(`/api/v1/links/${busy.id}/scans`);
    const quietErasure = await other.delete(`/api/v1/links/${quiet.id}/scans`);
    expect([busyErasure.status, quietErasure.status]).toEqual([202, 202]);
    expect(busyErasure.body).toMatchObject({ kind: 'link', linkId: busy.id, scanId: null, status: 'pending' });
    // Its first attempt fails (before anything is deleted), and it waits for its next, 4 s later. (Read
    // as soon as it happened: on replicas applying the others takes longer than those 4 s.)
    let retried: any;
    await eventually(async () => {
      retried = (await api.get(`/api/v1/privacy/erasures/${broken!.id}`)).body;
      return retried.attempts >= 1;
    }, 30_000, 100);
    expect(retried).toMatchObject({ status: 'pending', attempts: 1, error: expect.stringContaining('DateTime'), finishedAt: null });

    // Both applied, the broken one holding up neither.
    expect(await finished(other, quietErasure.body.id)).toMatchObject({ status: 'done', scans: 1 });
    expect(await finished(api, busyErasure.body.id, 120_000)).toMatchObject({ status: 'done', scans: 20_000, conversions: 0, webhookDeliveries: 0 });
    expect(await linkScansStored(ch, busy.id, 0)).toBe(true);
    expect(await scansStored(ch, a.workspaceId, 0)).toBe(true);
    expect(await scansStored(ch, b.workspaceId, 0)).toBe(true);
    // Its second attempt is its last: failed, with its error.
    expect(await finished(api, broken!.id)).toMatchObject({ status: 'failed', attempts: 2, error: expect.stringContaining('DateTime'), finishedAt: expect.any(String) });
  }, 240_000);
});
