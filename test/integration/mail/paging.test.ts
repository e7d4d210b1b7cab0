// Every mail list pages exactly: walking next_cursor with a small limit sees each row once,
// also when many rows share one created_at (one import batch shares one now(); Postgres keeps
// microseconds). Rows no API makes in one transaction are written here in one statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 60_000);
afterAll(async () => ingress?.close());

const db = () => ingress.platform.pg;

/** Every id of the list at `path`, page by page with `limit`. */
async function walk(key: string, path: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: { status: number; body: any } = await call(ingress.url, 'GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((item: { id: string }) => item.id));
    if (!res.body.has_more) {
      expect(res.body.next_cursor).toBeNull();
      return ids;
    }
    cursor = res.body.next_cursor;
  }
  throw new Error(`${path}: more than 1000 pages`);
}

/** The ids of `table`'s rows of the organization (or of `where`), for comparing with a walk. */
const idsOf = async (sql: string, params: unknown[]) => (await db().query<{ id: string }>(sql, params)).rows.map((r) => r.id).sort();

const expectEachOnce = (walked: string[], all: string[]) => {
  expect(new Set(walked).size).toBe(walked.length);
  expect([...walked].sort()).toEqual(all);
};

describe('paging', () => {
  it('contacts imported in one request, and a segment of them, page each row exactly once', async () => {
    const { organizationId, key } = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ email: `p${i}@paging.example`, first_name: `P${i}` })).join('\n');
    const imported = await call(ingress.url, 'POST', '/api/v1/contacts/import', { key, raw: lines, headers: { 'content-type': 'application/x-ndjson' } });
    expect(imported.body).toMatchObject({ rows: 1000, created: 1000 });
    // They do share one created_at: what the walk must get through.
    const { rows: times } = await db().query('SELECT count(DISTINCT created_at)::int AS n FROM mail_contacts WHERE organization_id = $1', [organizationId]);
    expect(times[0].n).toBe(1);
    const all = await idsOf('SELECT id FROM mail_contacts WHERE organization_id = $1', [organizationId]);
    expect(all).toHaveLength(1000);

    expectEachOnce(await walk(key, '/api/v1/contacts', 7), all);
    expectEachOnce(await walk(key, '/api/v1/contacts?status=subscribed', 100), all);

    const segment = await call(ingress.url, 'POST', '/api/v1/segments', { key, body: { name: 'all', filter: { field: 'email', op: 'contains', value: '@paging.example' } } });
    expect(segment.status).toBe(201);
    expectEachOnce(await walk(key, `/api/v1/segments/${segment.body.id}/contacts`, 7), all);
  }, 120_000);

  it('suppressions, topics, templates, domains, automations and runs sharing a timestamp page each row exactly once', async () => {
    const { organizationId, key } = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    const n = 40;
    const q = (sql: string) => db().query(sql, [organizationId, n]);
    await q("INSERT INTO mail_suppressions (organization_id, email, reason) SELECT $1, 's' || i || '@paging.example', 'manual' FROM generate_series(1, $2) i");
    await q("INSERT INTO mail_topics (organization_id, slug, name, default_subscription) SELECT $1, 't' || i, 'T' || i, 'opt_in' FROM generate_series(1, $2) i");
    await q("INSERT INTO mail_templates (organization_id, slug, name) SELECT $1, 't' || i, 'T' || i FROM generate_series(1, $2) i");
    await q("INSERT INTO mail_domains (organization_id, name, dkim_selector, dkim_private_key, dkim_public_key) SELECT $1, 'd' || i || '.paging.example', 's', 'k', 'k' FROM generate_series(1, $2) i");
    await q("INSERT INTO mail_automations (organization_id, name, trigger_event, from_address, from_domain, steps) SELECT $1, 'A' || i, 'signup', 'a@d1.paging.example', 'd1.paging.example', '[]' FROM generate_series(1, $2) i");
    const { rows: [automation] } = await db().query<{ id: string }>('SELECT id FROM mail_automations WHERE organization_id = $1 LIMIT 1', [organizationId]);
    await db().query("INSERT INTO mail_automation_runs (organization_id, automation_id, contact_id, event_id, state, steps) SELECT $1, $2, gen_random_uuid(), gen_random_uuid(), 'completed', '[]' FROM generate_series(1, $3)", [organizationId, automation!.id, n]);

    const lists: [string, string, unknown[]][] = [
      ['/api/v1/suppressions', 'SELECT id FROM mail_suppressions WHERE organization_id = $1', [organizationId]],
      ['/api/v1/topics', 'SELECT id FROM mail_topics WHERE organization_id = $1', [organizationId]],
      ['/api/v1/templates', 'SELECT id FROM mail_templates WHERE organization_id = $1', [organizationId]],
      ['/api/v1/domains', 'SELECT id FROM mail_domains WHERE organization_id = $1', [organizationId]],
      ['/api/v1/automations', 'SELECT id FROM mail_automations WHERE organization_id = $1', [organizationId]],
      [`/api/v1/automations/${automation!.id}/runs`, 'SELECT id FROM mail_automation_runs WHERE automation_id = $1', [automation!.id]],
    ];
    for (const [path, sql, params] of lists) {
      const all = await idsOf(sql, params);
      expect(all, path).toHaveLength(n);
      expectEachOnce(await walk(key, path, 7), all);
    }
  }, 120_000);

  it('a cursor made before microsecond cursors still works; a forged one is a 400', async () => {
    const { organizationId, key } = await organizationWithKey(ingress.url, { rate_limit: 1000 });
    await db().query("INSERT INTO mail_topics (organization_id, slug, name, default_subscription, created_at) SELECT $1, 't' || i, 'T' || i, 'opt_in', now() - i * interval '1 second' FROM generate_series(1, 5) i", [organizationId]);
    const first = await call(ingress.url, 'GET', '/api/v1/topics?limit=2', { key });
    const last = first.body.data[1];
    const legacy = Buffer.from(`${new Date(last.created_at).toISOString()}|${last.id}`).toString('base64url');
    const next = await call(ingress.url, 'GET', `/api/v1/topics?limit=10&cursor=${legacy}`, { key });
    expect(next.status).toBe(200);
    expect(next.body.data).toHaveLength(3);
    for (const forged of ['nope', Buffer.from('12|not-a-uuid').toString('base64url'), Buffer.from(`1e9|${last.id}`).toString('base64url'), Buffer.from(`123456789012345678|${last.id}`).toString('base64url')]) {
      const res = await call(ingress.url, 'GET', `/api/v1/topics?cursor=${forged}`, { key });
      expect([res.status, res.body.error?.code ?? res.body.name]).toEqual([400, 'invalid_cursor']);
    }
  }, 60_000);
});
