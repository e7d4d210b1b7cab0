// Link events for webhooks (issue 33, item 9): link.created, link.updated and
// link.deleted, chosen per endpoint, signed like scan.created, through the
// real stack: the links API, the links.changelog topic, the links-link-events and
// webhooks workers as their own process and a real HTTPS receiver.
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../examples/verify-webhook-signature.mjs';
import { client } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { scan } from '../../support/links/scans.ts';
import type { Receiver } from '../../support/links/webhook-receiver.ts';
import { useWebhookStack } from '../../support/links/webhook-stack.ts';

const stack = useWebhookStack(['links-link-events']);
const { receivers } = stack;

const receiver = () => receivers.start(() => 200);

const bodies = (r: Receiver) => r.received.map((q) => JSON.parse(q.body));
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('link events for webhooks', () => {
  it('an endpoint chooses its events: bad ones are refused, the default is scan.created, PATCH changes them', async () => {
    const api = client(stack.ingress.url, (await workspaceWithKey(stack.ingress.url)).key);
    for (const events of [[], ['link.renamed'], ['scan.created', 'scan.created'], 'link.created', [1]]) {
      const res = await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/x', events });
      expect([res.status, res.body.error?.code], JSON.stringify(events)).toEqual([400, 'validation_failed']);
    }
    const plain = await api.post('/api/v1/webhooks', { url: 'https://hooks.example.com/x' });
    expect(plain.body.events).toEqual(['scan.created']);
    const changed = await api.patch(`/api/v1/webhooks/${plain.body.id}`, { events: ['link.created', 'link.deleted'] });
    expect([changed.status, changed.body.events]).toEqual([200, ['link.created', 'link.deleted']]);
    expect((await api.get(`/api/v1/webhooks/${plain.body.id}`)).body.events).toEqual(['link.created', 'link.deleted']);
    expect((await api.patch(`/api/v1/webhooks/${plain.body.id}`, {})).body.error.code).toBe('validation_failed');
    expect((await api.patch(`/api/v1/webhooks/${plain.body.id}`, { url: 'https://other.example.com' })).body.error.code).toBe('unknown_field');
    expect((await api.patch('/api/v1/webhooks/00000000-0000-4000-8000-000000000000', { events: ['link.created'] })).status).toBe(404);
    const stranger = client(stack.ingress.url, (await workspaceWithKey(stack.ingress.url)).key);
    expect((await stranger.patch(`/api/v1/webhooks/${plain.body.id}`, { events: ['scan.created'] })).status).toBe(404);
  });

  it('sends link.created, link.updated and link.deleted, signed, once each, to the endpoints that want them', async () => {
    const ws = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, ws.key);
    const all = await receiver();
    const scansOnly = await receiver();
    const deletesOnly = await receiver();
    const allEndpoint = (await api.post('/api/v1/webhooks', { url: all.url, events: ['link.created', 'link.updated', 'link.deleted', 'scan.created'] })).body;
    await api.post('/api/v1/webhooks', { url: scansOnly.url });
    await api.post('/api/v1/webhooks', { url: deletesOnly.url, events: ['link.deleted'] });

    const created = await api.post('/api/v1/links', { destination: 'https://example.com/a', tags: ['print'] });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await api.patch(`/api/v1/links/${id}`, { destination: 'https://example.com/b' })).status).toBe(200);
    expect((await api.delete(`/api/v1/links/${id}`)).status).toBe(200);
    // Through bulk too.
    const bulk = await api.post('/api/v1/links/bulk', { operations: [{ action: 'create', link: { destination: 'https://example.com/bulk' } }] });
    expect(bulk.body.succeeded).toBe(1);

    await eventually(async () => all.received.length >= 4 && deletesOnly.received.length >= 1, 30_000);
    await settle(1500);
    // Each delivery is sent (and retried) on its own, so they may arrive in any order; createdAt orders them.
    const got = bodies(all).sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
    expect(got.filter((b) => b.data.id === id).map((b) => b.type)).toEqual(['link.created', 'link.updated', 'link.deleted']);
    const [c, u, d] = got.filter((b) => b.data.id === id);
    // Each carries the link as it was after that change, as the API answers it.
    expect(c.data).toMatchObject({ id, shortId: created.body.shortId, shortUrl: created.body.shortUrl, destination: 'https://example.com/a', tags: ['print'], isActive: true, passwordProtected: false });
    expect(u.data).toMatchObject({ destination: 'https://example.com/b', isActive: true });
    expect(d.data).toMatchObject({ destination: 'https://example.com/b', isActive: false });
    expect(new Set(got.map((b) => b.eventId)).size).toBe(got.length);
    expect(got.find((b) => b.data.id === bulk.body.results[0].link.id)?.type).toBe('link.created');
    for (const request of all.received) {
      expect(verifyWebhook(request.body, String(request.headers['x-service-signature']), allEndpoint.secret)).toBe(true);
      expect(request.headers['x-service-event']).toBe(JSON.parse(request.body).type);
    }
    expect(got).toHaveLength(4);
    expect(bodies(deletesOnly).map((b) => [b.type, b.data.id])).toEqual([['link.deleted', id]]);
    expect(scansOnly.received).toHaveLength(0);

    // The delivery log names the event; redelivery sends the same body.
    const log = await api.get(`/api/v1/webhooks/${allEndpoint.id}/deliveries`);
    const deleted = log.body.data.find((x: any) => x.eventId === d.eventId);
    expect(deleted).toMatchObject({ eventType: 'link.deleted', scanId: d.eventId, state: 'acknowledged' });
    const again = await api.post(`/api/v1/webhooks/${allEndpoint.id}/deliveries/${deleted.id}/redeliver`);
    expect(again.status).toBe(202);
    await eventually(async () => all.received.length >= 5, 30_000);
    expect(all.received[4]!.body).toBe(all.received.find((q) => JSON.parse(q.body).eventId === d.eventId)!.body);
  });

  it('a scan still sends scan.created only to endpoints that want it, and no link event', async () => {
    const ws = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, ws.key);
    const links = await receiver();
    const scans = await receiver();
    await api.post('/api/v1/webhooks', { url: links.url, events: ['link.updated'] });
    await api.post('/api/v1/webhooks', { url: scans.url, events: ['scan.created'] });
    const link = await api.post('/api/v1/links', { destination: 'https://example.com/s' });
    await eventually(async () => stack.ingress.app.redirects.cache.get(link.body.shortId) !== undefined, 5000, 20);
    expect((await scan(stack.ingress.url, link.body.shortId)).status).toBe(302);
    await eventually(async () => scans.received.length >= 1, 30_000);
    await settle(1500);
    expect(bodies(scans).map((b) => b.type)).toEqual(['scan.created']);
    expect(links.received).toHaveLength(0);
  });
});
