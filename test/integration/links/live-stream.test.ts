// The live scan stream (GET /api/v1/analytics/stream, /links/:id/analytics/stream): scans from
// real redirects and from the scans topic, filters, two tenants side by side, resuming by
// Last-Event-ID, a slow client dropped, a revoked key's streams closed, the plan's stream limit, a
// long resume decoded without holding the ingress's event loop.
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scansTopic } from '../../../topics/scans.ts';
import type { ScanEvent } from '../../../src/links/scans/scan-event.ts';
import { LIVE_STREAM_LIMITS } from '../../../src/links/workspaces/plans.ts';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
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

describe('filters', () => {
  it('linkId, country, device and trigger pick their scans; the link route streams one link', async () => {
    const linkA = randomUUID();
    const linkB = randomUUID();
    const byLink = await open(`/api/v1/analytics/stream?linkId=${(await createdLink(api, { destination: 'https://example.com/f' })).id}`);
    expect(byLink.status).toBe(200);
    const link = await createdLink(api, { destination: 'https://example.com/g' });
    const [country, device, trigger, combined, oneLink] = await Promise.all([
      open('/api/v1/analytics/stream?country=fr'),
      open('/api/v1/analytics/stream?device=mobile'),
      open('/api/v1/analytics/stream?trigger=qr'),
      open(`/api/v1/analytics/stream?country=FR&device=mobile&trigger=qr&linkId=${link.id.toUpperCase()}`),
      open(`/api/v1/links/${link.id}/analytics/stream?trigger=link`),
    ]);
    const sent = [
      scanEvent(workspaceId, { linkId: linkA, country: 'FR', device: 'desktop', trigger: 'link', shortId: 'fr' }),
      scanEvent(workspaceId, { linkId: linkB, country: 'DE', device: 'mobile', trigger: 'link', shortId: 'mobile' }),
      scanEvent(workspaceId, { linkId: linkB, country: 'DE', device: 'desktop', trigger: 'qr', shortId: 'qr' }),
      scanEvent(workspaceId, { linkId: link.id, country: 'FR', device: 'mobile', trigger: 'qr', shortId: 'all' }),
      scanEvent(workspaceId, { linkId: link.id, country: null, device: 'tablet', trigger: 'link', shortId: 'link' }),
      scanEvent(workspaceId, { linkId: linkA, shortId: 'last' }),
    ];
    await publish(sent);
    const scansOf = (s: SseStream, n: number) => s.until((e) => e.filter((x) => x.event === 'scan').length >= n, 10_000, `${n} scans`);
    await Promise.all([scansOf(country, 2), scansOf(device, 2), scansOf(trigger, 2), scansOf(combined, 1), scansOf(oneLink, 1)]);
    const all = await open('/api/v1/analytics/stream?linkId=' + link.id);
    // Time for any scan wrongly let through to arrive too.
    await new Promise((r) => setTimeout(r, 1000));
    expect(country.scans().map((x) => x.shortId)).toEqual(['fr', 'all']);
    expect(device.scans().map((x) => x.shortId)).toEqual(['mobile', 'all']);
    expect(trigger.scans().map((x) => x.shortId)).toEqual(['qr', 'all']);
    expect(combined.scans().map((x) => x.shortId)).toEqual(['all']);
    expect(oneLink.scans().map((x) => x.shortId)).toEqual(['link']);
    expect(byLink.scans()).toEqual([]);
    expect(all.scans()).toEqual([]); // opened after: live from then on
  });

  it('bad filters and a bad Last-Event-ID are 400 with stable codes; an unknown link 404', async () => {
    for (const [path, code] of [
      ['/api/v1/analytics/stream?country=FRA', 'validation_failed'],
      ['/api/v1/analytics/stream?device=phone', 'validation_failed'],
      ['/api/v1/analytics/stream?trigger=email', 'validation_failed'],
      ['/api/v1/analytics/stream?linkId=nope', 'validation_failed'],
      ['/api/v1/analytics/stream?from=2024-01-01T00:00:00Z', 'unknown_field'],
      [`/api/v1/links/${randomUUID()}/analytics/stream?device=phone`, 'validation_failed'],
    ] as const) {
      const res = await api.get(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe(code);
    }
    for (const id of ['garbage', '0.zz_0.1', '99.1', '0.-5', '63.1']) {
      const s = await open('/api/v1/analytics/stream', key, { 'last-event-id': id });
      expect(s.status, id).toBe(400);
      expect(s.body.error.code, id).toBe('invalid_last_event_id');
    }
    for (const path of [`/api/v1/analytics/stream?linkId=${randomUUID()}`, `/api/v1/links/${randomUUID()}/analytics/stream`]) {
      const res = await api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });
});

describe('tenants', () => {
  it("two workspaces streaming side by side each see only their own scans, and not the other's link", async () => {
    const other = await workspaceWithKey(ingress.url);
    const otherApi = client(ingress.url, other.key);
    const mine = await createdLink(api, { destination: 'https://example.com/mine' });
    const theirs = await createdLink(otherApi, { destination: 'https://example.com/theirs' });
    const [a, b] = await Promise.all([open('/api/v1/analytics/stream'), open('/api/v1/analytics/stream', other.key)]);
    expect((await otherApi.get(`/api/v1/links/${mine.id}/analytics/stream`)).status).toBe(404);
    expect((await otherApi.get(`/api/v1/analytics/stream?linkId=${mine.id}`)).status).toBe(404);
    for (let i = 0; i < 3; i++) {
      await scan(ingress.url, mine.shortId);
      await scan(ingress.url, theirs.shortId);
    }
    await a.until((e) => e.filter((x) => x.event === 'scan').length >= 3, 10_000, 'three scans of A');
    await b.until((e) => e.filter((x) => x.event === 'scan').length >= 3, 10_000, 'three scans of B');
    await new Promise((r) => setTimeout(r, 500));
    expect(a.scans().map((x) => x.linkId)).toEqual([mine.id, mine.id, mine.id]);
    expect(b.scans().map((x) => x.linkId)).toEqual([theirs.id, theirs.id, theirs.id]);
    expect(new Set(b.scans().map((x) => x.workspaceId))).toEqual(new Set([other.workspaceId]));
  });
});

describe('resume', () => {
  it('Last-Event-ID sends the scans after it, each once, those missed while away included', async () => {
    const first = await open('/api/v1/analytics/stream?device=console');
    const batch1 = Array.from({ length: 5 }, (_, i) => scanEvent(workspaceId, { device: 'console', shortId: `r1-${i}` }));
    await publish(batch1);
    await first.until((e) => e.filter((x) => x.event === 'scan').length === 5, 10_000, 'batch 1');
    // Leave after the third scan's event: resume from its id.
    const third = first.events.filter((x) => x.event === 'scan')[2]!;
    first.close();
    const batch2 = Array.from({ length: 4 }, (_, i) => scanEvent(workspaceId, { device: 'console', shortId: `r2-${i}` }));
    await publish(batch2);
    const again = await open('/api/v1/analytics/stream?device=console', key, { 'last-event-id': third.id });
    await again.until((e) => e.filter((x) => x.event === 'scan').length === 6, 10_000, 'the six scans after the third');
    await new Promise((r) => setTimeout(r, 700));
    expect(again.scans().map((x) => x.shortId)).toEqual(['r1-3', 'r1-4', 'r2-0', 'r2-1', 'r2-2', 'r2-3']);
    expect(again.events.some((e) => e.event === 'resync')).toBe(false);
    // A quiet stream's position moves on with its heartbeats (every 500 ms here) past the scans it
    // filtered out: resuming from it sends nothing old.
    const lastScanId = again.events.filter((x) => x.event === 'scan').at(-1)!.id;
    await publish(Array.from({ length: 3 }, () => scanEvent(workspaceId, { device: 'desktop', shortId: 'not-console' })));
    await again.until(() => again.lastEventId() !== lastScanId, 5000, 'a heartbeat with a newer position');
    const fromQuiet = await open('/api/v1/analytics/stream', key, { 'last-event-id': again.lastEventId() });
    const fromLastScan = await open('/api/v1/analytics/stream', key, { 'last-event-id': lastScanId });
    await fromLastScan.until((e) => e.filter((x) => x.event === 'scan').length >= 3, 5000, 'the three scans after the last console scan');
    await new Promise((r) => setTimeout(r, 500));
    expect(fromLastScan.scans().map((x) => x.shortId)).toEqual(['not-console', 'not-console', 'not-console']);
    expect(fromQuiet.scans()).toEqual([]);
  });
});

describe('slow clients and revoked keys', () => {
  it('a client that stops reading is dropped with a final end event (slow_client), its buffer bounded', async () => {
    const slow = await open('/api/v1/analytics/stream?device=embedded');
    slow.pause();
    // Far more than the socket buffers hold: the server's own unsent bytes pass the 64 KiB bound.
    for (let round = 0; round < 48; round++) {
      await publish(Array.from({ length: 500 }, () => scanEvent(workspaceId, { device: 'embedded', userAgent: 'x'.repeat(400) })));
    }
    await new Promise((r) => setTimeout(r, 1500));
    slow.resume();
    await slow.ended;
    const last = slow.events.at(-1)!;
    expect(last.event).toBe('end');
    expect(JSON.parse(last.data)).toEqual({ reason: 'slow_client' });
    expect(slow.scans().length).toBeLessThan(24_000);
  });

  it("a revoked key's streams end within 5 s with end: revoked, and it cannot open another", async () => {
    // A workspace of its own: the test before floods the file's workspace with 24,000 scans, which its
    // unfiltered streams would still be receiving when a slow machine is behind (dropped as slow_client).
    const quiet = await workspaceWithKey(ingress.url);
    const { key: other, keyId } = await (async () => {
      const res = await client(ingress.url, quiet.key).post('/api/v1/keys', { name: 'live', scopes: ['analytics:read'] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { key: res.body.key as string, keyId: res.body.id as string };
    })();
    const [s1, s2] = await Promise.all([open('/api/v1/analytics/stream', other), open('/api/v1/analytics/stream?country=de', other)]);
    const kept = await open('/api/v1/analytics/stream', quiet.key);
    expect((await client(ingress.url, quiet.key).delete(`/api/v1/keys/${keyId}`)).status).toBe(200);
    const revokedAt = Date.now();
    await Promise.all([s1.ended, s2.ended]);
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    for (const s of [s1, s2]) expect(s.events.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ reason: 'revoked' }) });
    expect((await openStream(ingress.url, '/api/v1/analytics/stream', other)).status).toBe(401);
    // The workspace's other key keeps its stream.
    await new Promise((r) => setTimeout(r, 1200));
    expect(kept.events.some((e) => e.event === 'end')).toBe(false);
  });

  it('HEAD answers the headers and holds no stream', async () => {
    const res = await fetch(`${ingress.url}/api/v1/analytics/stream`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  });

  it('a key without analytics:read is 403 insufficient_scope', async () => {
    const res = await api.post('/api/v1/keys', { name: 'links only', scopes: ['links:read'] });
    const s = await openStream(ingress.url, '/api/v1/analytics/stream', res.body.key);
    expect(s.status).toBe(403);
    expect(s.body.error.code).toBe('insufficient_scope');
  });
});

describe('limits', () => {
  it("a workspace holds at most its plan's streams at once (429 stream_limit_reached), another workspace is not counted, and a closed one frees its slot", async () => {
    const ws = await workspaceWithKey(ingress.url);
    const limit = LIVE_STREAM_LIMITS.enterprise;
    const held: SseStream[] = [];
    for (let i = 0; i < limit; i += 20) held.push(...await Promise.all(Array.from({ length: Math.min(20, limit - i) }, () => open('/api/v1/analytics/stream', ws.key))));
    expect(held.every((s) => s.status === 200)).toBe(true);
    const over = await openStream(ingress.url, '/api/v1/analytics/stream', ws.key);
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('stream_limit_reached');
    // Another workspace's streams are its own.
    const mine = await open('/api/v1/analytics/stream');
    expect(mine.status).toBe(200);
    held[0]!.close();
    // The slot is freed once the server sees the client go (a moment): until then, 429.
    const again = await eventually(async () => {
      const s = await open('/api/v1/analytics/stream', ws.key);
      if (s.status !== 200) expect(s.body.error.code).toBe('stream_limit_reached');
      return s.status === 200 ? s : undefined;
    }, 5000, 50);
    expect(again!.status).toBe(200);
    for (const s of held) s.close();
  });
});

describe('resume past the ring', () => {
  it('a Last-Event-ID older than the scans the ingress keeps gets a resync event, then the scans it still has', async () => {
    const small = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', LIVE_STREAM_RING_PER_PARTITION: '100' });
    try {
      const ws = await workspaceWithKey(small.url);
      const s = await openStream(small.url, '/api/v1/analytics/stream', ws.key);
      streams.push(s);
      await s.until(() => s.lastEventId() !== '', 5000, 'a first position');
      const start = s.lastEventId();
      s.close();
      // Another stream of the workspace shows when the ingress has read what is published.
      const watcher = await openStream(small.url, '/api/v1/analytics/stream', ws.key);
      streams.push(watcher);
      // 250 scans of the workspace (one partition: its key) while away, more than the ring's 100.
      const sent = Array.from({ length: 250 }, (_, i) => scanEvent(ws.workspaceId, { shortId: `old-${i}` }));
      await small.platform.publisher.publish<ScanEvent>(scansTopic, sent.map((value) => ({ key: value.workspaceId, value })));
      // Back only once the ingress has read all 250 (on a slow machine it may not have yet, and a resume
      // from a position its ring still covers is no resync: the scans then come live, every one).
      await watcher.until((e) => e.filter((x) => x.event === 'scan').length >= 250, 10_000, 'the 250 scans');
      const again = await openStream(small.url, '/api/v1/analytics/stream', ws.key, { 'last-event-id': start });
      streams.push(again);
      await again.until((e) => e.some((x) => x.event === 'resync') && e.filter((x) => x.event === 'scan').length >= 100, 10_000, 'resync and the kept scans');
      expect(again.events[0]).toMatchObject({ event: 'resync', data: JSON.stringify({ reason: 'resume_expired' }) });
      const got = again.scans().map((x) => x.shortId);
      // What it kept is the newest, in order and each once.
      expect(got.length).toBeLessThanOrEqual(100);
      expect(got).toEqual(sent.slice(250 - got.length).map((x) => x.shortId));
    } finally {
      await small.close();
    }
  });
});

describe('a long resume', () => {
  it('is decoded a slice at a time: the ingress\'s event loop is never held for the whole of it', async () => {
    const ws = await workspaceWithKey(ingress.url);
    const hub = ingress.app.liveScans;
    // A stream of the workspace keeps the hub reading while its scans arrive.
    const live = await open('/api/v1/analytics/stream?device=console', ws.key);
    const n = 30_000;
    const heldBefore = hub.held;
    for (let i = 0; i < n; i += 3000) await publish(Array.from({ length: 3000 }, () => scanEvent(ws.workspaceId, { device: 'desktop' })));
    await eventually(async () => hub.held >= heldBefore + n, 30_000, 100);
    live.close();
    // A resume from the start of every partition: every one of the workspace's scans the ring holds, decoded before the stream answers.
    const farBack = Array.from({ length: scansTopic.partitions }, (_, p) => `${p}.-1`).join('_');
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = Date.now();
    const replayed = await open('/api/v1/analytics/stream', ws.key, { 'last-event-id': farBack });
    const tookMs = Date.now() - started;
    delay.disable();
    expect(replayed.status).toBe(200);
    await replayed.until((e) => e.length > 0, 10_000, 'the replay');
    // The longest the event loop waited while the replay was decoded: far less than the whole replay
    // (decoded in the lock without a pause, it held the loop for nearly all of it: 434 of 449 ms; in
    // slices the longest wait was 65-71 ms of 310-394, most of it the replay's one write to the socket).
    const maxDelayMs = delay.max / 1e6;
    expect(maxDelayMs, `event loop held up to ${maxDelayMs.toFixed(0)} ms during a resume of ${tookMs} ms`).toBeLessThan(tookMs / 2);
  }, 60_000);
});

describe('shutdown', () => {
  it('an ingress that stops ends its open streams with end: shutdown, and its close does not wait for them', async () => {
    const other = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
    try {
      const s = await openStream(other.url, '/api/v1/analytics/stream?country=nl', key);
      streams.push(s);
      expect(s.status).toBe(200);
      await other.close();
      await s.ended;
      expect(s.events.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ reason: 'shutdown' }) });
    } finally {
      await other.close().catch(() => {});
    }
  });
});
