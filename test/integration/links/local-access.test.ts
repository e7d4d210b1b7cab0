// The newcomer's way in: outside production, the local bootstrap makes an
// Enterprise workspace and an API key once through the admin API, keeps the key
// (and a generated admin token) under a state folder, and hands back the same
// working key on later runs — a new one when the kept key no longer works (the
// database was reset). In production it does nothing at all.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureLocalAccess, localAdminToken } from '../../../src/links/admin/local-access.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';

let ingress: TestIngress;
let dir: string;
let adminToken: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'local-access-'));
  adminToken = localAdminToken(dir);
  ingress = await startIngress({ ADMIN_TOKEN: adminToken });
});
afterAll(async () => {
  await ingress?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('local access bootstrap', () => {
  it('keeps one admin token of the accepted form, readable only by its owner', () => {
    expect(adminToken).toMatch(/^\S{16,}$/);
    expect(localAdminToken(dir)).toBe(adminToken);
    expect(statSync(join(dir, 'local-admin-token')).mode & 0o077).toBe(0);
  });

  it('makes an Enterprise workspace and a working key once, and gives the same key on the next run', async () => {
    const first = await ensureLocalAccess({ baseUrl: ingress.url, adminToken, dir, nodeEnv: 'development' });
    expect(first).toMatchObject({ created: true, apiKey: expect.stringMatching(/^lk_live_/) });
    expect(readFileSync(join(dir, 'local-api-key'), 'utf8').trim()).toBe(first!.apiKey);
    expect(statSync(join(dir, 'local-api-key')).mode & 0o077).toBe(0);

    const second = await ensureLocalAccess({ baseUrl: ingress.url, adminToken, dir, nodeEnv: 'development' });
    expect(second).toMatchObject({ created: false, apiKey: first!.apiKey, workspaceId: first!.workspaceId });

    // The key works: it creates a link, and the link redirects.
    const link = await call(ingress.url, 'POST', '/api/v1/links', { key: second!.apiKey, body: { destination: 'https://example.com/hello' } });
    expect(link.status).toBe(201);
    const scan = await fetch(link.body.shortUrl.replace(/^https?:\/\/[^/]+/, ingress.url), { redirect: 'manual' });
    expect(scan.status).toBe(302);
    // The list is paged, and other files make workspaces in the same database meanwhile: walk it.
    const workspaces: any[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page: { body: any } = await call(ingress.url, 'GET', `/admin/v1/workspaces?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${adminToken}` } });
      workspaces.push(...page.body.data);
      cursor = page.body.nextCursor;
    }
    expect(workspaces.find((w: any) => w.id === first!.workspaceId)).toMatchObject({ plan: 'enterprise' });
  });

  it('makes a new key when the kept one no longer works', async () => {
    const before = await ensureLocalAccess({ baseUrl: ingress.url, adminToken, dir, nodeEnv: 'development' });
    const admin = { headers: { authorization: `Bearer ${adminToken}` } };
    const keys = await call(ingress.url, 'GET', `/admin/v1/workspaces/${before!.workspaceId}/keys`, admin);
    for (const key of keys.body.data) await call(ingress.url, 'DELETE', `/admin/v1/workspaces/${before!.workspaceId}/keys/${key.id}`, admin);

    const after = await ensureLocalAccess({ baseUrl: ingress.url, adminToken, dir, nodeEnv: 'development' });
    expect(after!.created).toBe(true);
    expect(after!.apiKey).not.toBe(before!.apiKey);
    expect((await call(ingress.url, 'GET', '/api/v1/links', { key: after!.apiKey })).status).toBe(200);
  });

  it('does nothing in production', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'local-access-prod-'));
    try {
      expect(await ensureLocalAccess({ baseUrl: ingress.url, adminToken, dir: empty, nodeEnv: 'production' })).toBeUndefined();
      expect(readdirSync(empty)).toEqual([]);
      expect(existsSync(join(empty, 'local-api-key'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
