// Scoped keys (issue 43, item 1; issue 50: revoking bounded too) through real HTTP: POST/GET/DELETE /api/v1/keys,
// every scope enforced on a route of its own (403 insufficient_scope naming it,
// nothing changed), a key granting only scopes it holds, revocation seen at once
// by a second ingress, and the MCP link tools under the same scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { callOk, callRefused, connectMcp, toolNames } from '../../support/mcp.ts';
import { SCOPES, type Scope } from '../../../src/links/auth/scopes.ts';

let a: TestIngress;
let b: TestIngress;

beforeAll(async () => {
  [a, b] = await Promise.all([startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' }), startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** A new key of the workspace holding exactly these scopes, issued through POST /api/v1/keys. */
async function keyWith(ownerKey: string, scopes: Scope[]): Promise<string> {
  const res = await client(a.url, ownerKey).post('/api/v1/keys', { name: scopes.join(' '), scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key;
}

describe('scoped keys', () => {
  it('issues, lists and revokes keys; a key made before scopes holds them all; bad input changes nothing', async () => {
    const ws = await workspaceWithKey(a.url);
    const owner = client(a.url, ws.key);
    const before = await owner.get('/api/v1/keys');
    expect(before.status).toBe(200);
    expect(before.body.data).toHaveLength(1);
    expect(before.body.data[0]).toMatchObject({ id: ws.keyId, scopes: [...SCOPES], revokedAt: null });

    const issued = await owner.post('/api/v1/keys', { name: 'reporting', scopes: ['links:read', 'analytics:read'] });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ name: 'reporting', scopes: ['links:read', 'analytics:read'] });
    expect(issued.body.key).toMatch(/^lk_live_[0-9A-Za-z]{32}$/);
    expect(issued.body.id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await owner.get('/api/v1/keys');
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([issued.body.id, ws.keyId]);
    expect(JSON.stringify(listed.body)).not.toContain(issued.body.key);
    expect(JSON.stringify(listed.body)).not.toContain('workspaceId');

    for (const body of [{ name: 'x', scopes: [] }, { name: 'x', scopes: ['links:admin'] }, { name: 'x', scopes: ['links:read', 'links:read'] }, { name: '', scopes: ['links:read'] }, { scopes: ['links:read'] }, { name: 'x', scopes: 'links:read' }]) {
      const res = await owner.post('/api/v1/keys', body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
    expect((await owner.get('/api/v1/keys')).body.data).toHaveLength(2);

    // Another workspace's key is not this workspace's to list or revoke.
    const stranger = client(a.url, (await workspaceWithKey(a.url)).key);
    expect((await stranger.delete(`/api/v1/keys/${issued.body.id}`)).status).toBe(404);
    expect((await stranger.get('/api/v1/keys')).body.data).toHaveLength(1);
    expect((await owner.delete('/api/v1/keys/not-a-uuid')).status).toBe(404);
  });

  it('each route needs its scope: a key without it gets 403 insufficient_scope naming the scope, and nothing changes', async () => {
    const ws = await workspaceWithKey(a.url);
    const owner = client(a.url, ws.key);
    const link = (await owner.post('/api/v1/links', { destination: 'https://example.com/scoped' })).body;
    // One request per scope, each needing only that scope.
    const requests: Record<Scope, [string, string, unknown?]> = {
      'links:read': ['GET', `/api/v1/links/${link.id}`],
      'links:write': ['PATCH', `/api/v1/links/${link.id}`, { destination: 'https://example.com/changed' }],
      'analytics:read': ['GET', '/api/v1/analytics'],
      'conversions:write': ['POST', '/api/v1/track', { clickId: 'not-a-click-id' }],
      'domains:write': ['POST', '/api/v1/link-domains', { name: `go-${link.shortId.toLowerCase()}.example.com` }],
      'webhooks:write': ['GET', '/api/v1/webhooks'],
      'keys:write': ['GET', '/api/v1/keys'],
    };
    for (const held of SCOPES) {
      const api = client(a.url, await keyWith(ws.key, [held]));
      for (const [needed, [method, path, body]] of Object.entries(requests) as [Scope, [string, string, unknown?]][]) {
        const res = method === 'GET' ? await api.get(path) : method === 'PATCH' ? await api.patch(path, body) : await api.post(path, body);
        if (needed === held) {
          expect(res.status, `${held} on ${method} ${path}: ${JSON.stringify(res.body)}`).not.toBe(403);
        } else {
          expect([res.status, res.body.error?.code], `${held} on ${method} ${path}`).toEqual([403, 'insufficient_scope']);
          expect(res.body.error.message).toContain(needed);
        }
      }
    }
    // Only the links:write key changed the link; the others' PATCH changed nothing.
    expect((await owner.get(`/api/v1/links/${link.id}`)).body.destination).toBe('https://example.com/changed');
    // A bad body from a key without the scope is still 403: the scope is checked before the body.
    const reader = client(a.url, await keyWith(ws.key, ['links:read']));
    expect((await reader.post('/api/v1/links', { destination: 'not a url' })).body.error.code).toBe('insufficient_scope');
    expect((await reader.post('/api/v1/links/bulk', { operations: [] })).body.error.code).toBe('insufficient_scope');
  });

  it('a key grants only scopes it holds itself', async () => {
    const ws = await workspaceWithKey(a.url);
    const keyAdmin = client(a.url, await keyWith(ws.key, ['keys:write', 'links:read']));
    const refused = await keyAdmin.post('/api/v1/keys', { name: 'wider', scopes: ['links:read', 'links:write'] });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'insufficient_scope']);
    expect(refused.body.error.message).toContain('links:write');
    const narrower = await keyAdmin.post('/api/v1/keys', { name: 'narrower', scopes: ['links:read'] });
    expect([narrower.status, narrower.body.scopes]).toEqual([201, ['links:read']]);
    // Without scopes named, the new key holds the caller's.
    const same = await keyAdmin.post('/api/v1/keys', { name: 'same' });
    expect(same.body.scopes.sort()).toEqual(['keys:write', 'links:read']);
    expect((await client(a.url, ws.key).get('/api/v1/keys')).body.data).toHaveLength(4);
  });

  it('a key revokes only keys whose scopes it holds itself, in two workspaces side by side', async () => {
    const [one, two] = await Promise.all([workspaceWithKey(a.url), workspaceWithKey(a.url)]);
    for (const ws of [one, two]) {
      const keyAdmin = client(a.url, await keyWith(ws.key, ['keys:write']));
      const wider = await keyWith(ws.key, ['keys:write', 'links:read']);
      const ids = Object.fromEntries((await client(a.url, ws.key).get('/api/v1/keys')).body.data.map((k: { name: string; id: string }) => [k.name, k.id]));
      // The workspace's full key and a key with one scope more: 403 naming a scope it lacks, nothing revoked.
      for (const [id, key] of [[ws.keyId, ws.key], [ids['keys:write links:read'], wider]] as const) {
        const refused = await keyAdmin.delete(`/api/v1/keys/${id}`);
        expect([refused.status, refused.body.error?.code]).toEqual([403, 'insufficient_scope']);
        expect(refused.body.error.message).toContain('links:read');
        expect((await client(a.url, key).get('/api/v1/keys')).status).toBe(200);
      }
      // A key with a subset of its scopes (here the same ones) it may revoke.
      const peer = await keyWith(ws.key, ['keys:write']);
      const peerId = (await client(a.url, peer).get('/api/v1/keys')).body.data[0].id;
      expect((await keyAdmin.delete(`/api/v1/keys/${peerId}`)).status).toBe(200);
      expect((await client(a.url, peer).get('/api/v1/keys')).status).toBe(401);
    }
    // Even a full key never reaches another workspace's key (404), whatever its scopes.
    expect((await client(a.url, one.key).delete(`/api/v1/keys/${two.keyId}`)).status).toBe(404);
    expect((await client(a.url, two.key).get('/api/v1/keys')).status).toBe(200);
  });

  it('a revoked key is refused at once on another ingress too', async () => {
    const ws = await workspaceWithKey(a.url);
    const key = await keyWith(ws.key, ['links:read']);
    const onB = client(b.url, key);
    expect((await onB.get('/api/v1/links')).status).toBe(200);
    const id = (await client(a.url, ws.key).get('/api/v1/keys')).body.data.find((k: { name: string }) => k.name === 'links:read').id;
    const revoked = await client(a.url, ws.key).delete(`/api/v1/keys/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    const after = await onB.get('/api/v1/links');
    expect([after.status, after.body.error.code]).toEqual([401, 'invalid_api_key']);
    expect((await client(a.url, key).get('/api/v1/links')).status).toBe(401);
    // A key may revoke itself; it is refused from then on.
    const self = await keyWith(ws.key, ['keys:write']);
    const selfId = (await client(b.url, self).get('/api/v1/keys')).body.data[0].id;
    expect((await client(b.url, self).delete(`/api/v1/keys/${selfId}`)).status).toBe(200);
    expect((await client(a.url, self).get('/api/v1/keys')).status).toBe(401);
  });

  it('MCP link tools obey the same scopes: a tool outside the key\'s scopes is not listed and its call is refused', async () => {
    const ws = await workspaceWithKey(a.url);
    const mcp = await connectMcp(a.url, await keyWith(ws.key, ['links:read']));
    try {
      expect((await toolNames(mcp)).sort()).toEqual(['list_campaigns', 'list_links']);
      expect((await callOk(mcp, 'list_links')).links).toEqual([]);
      const refused = await callRefused(mcp, 'create_link', { destination: 'https://example.com/mcp' });
      expect(refused.error.code).toBe('insufficient_scope');
      expect(refused.error.message).toContain('links:write');
      expect((await client(a.url, ws.key).get('/api/v1/links')).body.data).toEqual([]);
    } finally {
      await mcp.close();
    }
    const full = await connectMcp(a.url, ws.key);
    try {
      expect(await toolNames(full)).toHaveLength(9);
    } finally {
      await full.close();
    }
  });
});
