// conversion.created webhooks (issue 43, item 7) through the real stack: scans by
// real redirects, conversions and tracked clicks by POST /api/v1/track, the
// conversions topic, the links-conversion-events and webhooks workers as their own
// process and a real HTTPS receiver; signed like scan.created, sent only to the
// endpoints that name the event, and only to the workspace's own.
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../examples/verify-webhook-signature.mjs';
import { client } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { eventually } from '../../support/env.ts';
import { scan } from '../../support/links/scans.ts';
import type { Receiver } from '../../support/links/webhook-receiver.ts';
import { useWebhookStack } from '../../support/links/webhook-stack.ts';

const stack = useWebhookStack(['links-conversion-events'], { WEBHOOK_RETRY_BASE_MS: '200' });
const { receivers } = stack;

const bodies = (r: Receiver) => r.received.map((q) => JSON.parse(q.body));

describe('conversion.created webhooks', () => {
  it('sends every conversion and tracked click to the endpoints that name the event, signed, with the conversion\'s fields', async () => {
    const ws = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, ws.key);
    const conversions = await receivers.start(() => 200);
    const everything = await receivers.start(() => 200);
    const scansOnly = await receivers.start(() => 200);
    const convEndpoint = (await api.post('/api/v1/webhooks', { url: conversions.url, events: ['conversion.created'] })).body;
    expect(convEndpoint.events).toEqual(['conversion.created']);
    const allEndpoint = (await api.post('/api/v1/webhooks', { url: everything.url, events: ['scan.created', 'conversion.created'] })).body;
    await api.post('/api/v1/webhooks', { url: scansOnly.url });
    // Another workspace's endpoint for conversions hears nothing of these.
    const other = await workspaceWithKey(stack.ingress.url);
    const stranger = await receivers.start(() => 200);
    await client(stack.ingress.url, other.key).post('/api/v1/webhooks', { url: stranger.url, events: ['conversion.created'] });

    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/shop' })).body;
    const visit = await scan(stack.ingress.url, link.shortId);
    expect(visit.clickId).not.toBeNull();
    const click = await api.post('/api/v1/track', { clickId: visit.clickId, type: 'click' });
    expect(click.status, JSON.stringify(click.body)).toBe(201);
    const sale = await api.post('/api/v1/track', { clickId: visit.clickId, event: 'purchase', amount: 12.5, currency: 'eur', externalId: 'order-1', metadata: { sku: 'A1' } });
    expect(sale.status, JSON.stringify(sale.body)).toBe(201);

    await eventually(async () => conversions.received.length >= 2 && everything.received.length >= 3 && scansOnly.received.length >= 1, 30_000);
    const got = bodies(conversions).sort((a, b) => Date.parse(a.data.timestamp) - Date.parse(b.data.timestamp));
    expect(got.map((b) => [b.type, b.data.type])).toEqual([['conversion.created', 'click'], ['conversion.created', 'conversion']]);
    expect(got[1]).toMatchObject({
      conversionId: sale.body.id,
      data: { conversionId: sale.body.id, event: 'purchase', workspaceId: ws.workspaceId, linkId: link.id, clickId: visit.clickId, amount: 12.5, currency: 'EUR', externalId: 'order-1', metadata: { sku: 'A1' } },
    });
    expect(got[0].data.scanId).toBe(got[1].data.scanId);
    for (const request of conversions.received) {
      expect(verifyWebhook(request.body, String(request.headers['x-service-signature']), convEndpoint.secret)).toBe(true);
      expect(request.headers['x-service-event']).toBe('conversion.created');
    }
    expect(bodies(everything).map((b) => b.type).sort()).toEqual(['conversion.created', 'conversion.created', 'scan.created']);
    for (const request of everything.received) expect(verifyWebhook(request.body, String(request.headers['x-service-signature']), allEndpoint.secret)).toBe(true);
    expect(bodies(scansOnly).map((b) => b.type)).toEqual(['scan.created']);

    // The delivery log names the event, with the conversion's id as its eventId.
    // (The receiver has the requests; the log records their answers a moment later.)
    const log = (await eventually(async () => {
      const res = await api.get(`/api/v1/webhooks/${convEndpoint.id}/deliveries`);
      return res.body.data.every((d: { state: string }) => d.state === 'acknowledged') ? res : undefined;
    }, 10_000))!;
    expect(log.body.data.map((d: { eventType: string; eventId: string; state: string }) => [d.eventType, d.state]).sort()).toEqual([['conversion.created', 'acknowledged'], ['conversion.created', 'acknowledged']]);
    expect(log.body.data.map((d: { eventId: string }) => d.eventId)).toContain(sale.body.id);
    // A repeated track (same externalId) is the same conversion: no second event.
    const repeat = await api.post('/api/v1/track', { clickId: visit.clickId, event: 'purchase', amount: 12.5, currency: 'EUR', externalId: 'order-1' });
    expect(repeat.body.duplicate).toBe(true);
    // The stranger's endpoint got nothing: its workspace recorded no conversion. (Checked last, after the others arrived.)
    expect(stranger.received).toHaveLength(0);
    expect(conversions.received).toHaveLength(2);
  });

  it('retries a conversion.created the receiver failed, as scan.created is retried', async () => {
    const ws = await workspaceWithKey(stack.ingress.url);
    const api = client(stack.ingress.url, ws.key);
    let calls = 0;
    const flaky = await receivers.start(() => (++calls === 1 ? 503 : 200));
    await api.post('/api/v1/webhooks', { url: flaky.url, events: ['conversion.created'] });
    const link = (await api.post('/api/v1/links', { destination: 'https://example.com/retry' })).body;
    const visit = await scan(stack.ingress.url, link.shortId);
    const sale = await api.post('/api/v1/track', { clickId: visit.clickId });
    expect(sale.status).toBe(201);
    await eventually(async () => flaky.received.length >= 2, 30_000);
    expect(flaky.received[0]!.body).toBe(flaky.received[1]!.body);
    expect(JSON.parse(flaky.received[1]!.body).conversionId).toBe(sale.body.id);
  });
});
