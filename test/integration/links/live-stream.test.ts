// The live scan stream (GET /api/v1/analytics/stream, /links/:id/analytics/stream): scans from
// real redirects and from the scans topic, filters, two tenants side by side, resuming by
// Last-Event-ID, a slow client dropped, a revoked key's streams closed, the plan's stream limit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { LIVE_STREAM_LIMITS } from '../../../src/links/workspaces/plans.ts';
import { client, type TestIngress } from '../../support/ingress.ts';
import { createdLink, ingressWithWorkspace, type ApiClient } from '../../support/links/ingress-with-workspace.ts';
import { scan } from '../../support/links/scans.ts';
import { openStream, type SseStream } from '../../support/links/sse-client.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let api: ApiClient;
let key: string;
let workspaceId: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  ({ ingress, api, key, workspaceId } = await ingressWithWorkspace({ LIVE_STREAM_MAX_BUFFERED_BYTES: '65536', LIVE_STREAM_HEARTBEAT_MS: '500' }));
});
afterAll(async () => {
  for (const s of streams) s.close?.();
  await ingress?.close();
});

const open = async (path: string, k = key, headers: Record<string, string> = {}) => {
  const s = await openStream(ingress.url, path, k, headers);
  streams.push(s);
  return s;
};

/** A scan as the shipper publishes it, straight onto the scans topic (for many scans, or fields a redirect cannot choose). */
function scanEvent(ws: string, fields: Partial<ScanEvent> = {}): ScanEvent {
  return {
    scanId: randomUUID(), clickId: randomUUID(), workspaceId: ws, linkId: randomUUID(), shortId: 'x', campaignId: null, timestamp: Date.now(),
    destination: 'https://example.com/', variant: null, trigger: 'link', country: 'DE', region: null, city: null, device: 'desktop', os: null, browser: null,
    referrer: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, isBot: false,
    userAgent: null, visitorId: 'v', ...fields,
  };
}
const publish = (events: ScanEvent[]) => ingress.platform.publisher.publish<ScanEvent>(scansTopic, events.map((value) => ({ key: value.workspaceId, value })));

describe('delivery', () => {
  it('a redirect reaches an open stream as one scan event with the scan.created fields and no IP', async () => {
    const link = await createdLink(api, { destination: 'https://example.com/live' });
    const s = await open('/api/v1/analytics/stream');
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['x-ratelimit-limit']).toBeDefined();
    const ip = '203.0.113.77';
    const res = await scan(ingress.url, link.shortId, { 'x-forwarded-for': ip });
    expect(res.status).toBe(302);
    await s.until((e) => e.some((x) => x.event === 'scan'), 10_000, 'scan event');
    const [got] = s.scans();
    expect(got).toMatchObject({ workspaceId, linkId: link.id, shortId: link.shortId, clickId: res.clickId, destination: 'https://example.com/live', trigger: 'link', device: 'desktop' });
    expect(Object.keys(got).sort()).toEqual(['browser', 'campaignId', 'city', 'clickId', 'country', 'destination', 'device', 'isBot', 'linkId', 'os', 'referrer', 'referrerHost', 'region', 'scanId', 'shortId', 'timestamp', 'trigger', 'userAgent', 'utm', 'variant', 'visitorId', 'workspaceId']);
    expect(JSON.stringify(s.events)).not.toContain(ip);
    // One event for one scan, even after more time.
    await new Promise((r) => setTimeout(r, 1000));
    expect(s.scans()).toHaveLength(1);
  });
});
